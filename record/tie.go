package record

import (
	"os/exec"
	"syscall"
)

// StartTied starts cmd so that it dies with this process, even when this
// process is killed with SIGKILL and has no chance to stop it: on Linux the
// kernel sends the child sig (SysProcAttr.Pdeathsig) when its parent goes.
// Other unix systems get a plain start.
//
// Pdeathsig fires when the OS thread that created the child exits, not the
// process (https://go.dev/issue/27505), and the Go runtime may end a thread
// while the process lives on. So cmd is started on a goroutine locked to its
// thread, which stays locked, and the thread alive, until the child is
// reaped: that goroutine waits for it. Call the returned wait instead of
// cmd.Wait (exactly once); it returns what cmd.Wait returned.
//
// cmd.SysProcAttr is kept (Setpgid, for example) with Pdeathsig set in it.
//
// On Windows cmd is started suspended, put in a job object that is killed
// when its last handle closes and only then let run: if this process ends,
// however it ends, the kernel terminates cmd and everything it started
// meanwhile; sig is not used, as Windows has no signals. Once cmd has exited
// the job lets go of what is left, which lives on, as on unix.
// cmd.SysProcAttr is kept with CREATE_SUSPENDED added to its CreationFlags.
func StartTied(cmd *exec.Cmd, sig syscall.Signal) (wait func() error, err error) {
	return startTied(cmd, sig)
}
