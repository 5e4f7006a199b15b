package record

import (
	"os/exec"
	"runtime"
	"syscall"
)

// StartTied starts cmd so that it dies with this process, even when this
// process is killed with SIGKILL and has no chance to stop it: on Linux the
// kernel sends the child sig (SysProcAttr.Pdeathsig) when its parent goes.
// Other systems get a plain start.
//
// Pdeathsig fires when the OS thread that created the child exits, not the
// process (https://go.dev/issue/27505), and the Go runtime may end a thread
// while the process lives on. So cmd is started on a goroutine locked to its
// thread, which stays locked, and the thread alive, until the child is
// reaped: that goroutine waits for it. Call the returned wait instead of
// cmd.Wait (exactly once); it returns what cmd.Wait returned.
//
// cmd.SysProcAttr is kept (Setpgid, for example) with Pdeathsig set in it.
func StartTied(cmd *exec.Cmd, sig syscall.Signal) (wait func() error, err error) {
	setDeathSignal(cmd, sig)
	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return func() error { return <-waited }, nil
}
