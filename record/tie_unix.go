//go:build unix

package record

import (
	"os/exec"
	"runtime"
	"syscall"
)

// startTied is StartTied: the kernel's parent-death signal, where there is
// one, and a start on a goroutine locked to its thread.
func startTied(cmd *exec.Cmd, sig syscall.Signal) (wait func() error, err error) {
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
