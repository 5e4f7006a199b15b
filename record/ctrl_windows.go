//go:build windows

package record

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// deliver does what sig asks of the console process group that pid leads,
// as far as Windows can (see Group.Signal): SIGKILL calls kill; SIGINT,
// SIGTERM, SIGHUP and SIGQUIT send the group a CTRL_BREAK_EVENT, or call
// kill when this process has no console the group shares; any other signal
// is a *SignalError.
func deliver(pid int, sig syscall.Signal, kill func() error) error {
	switch sig {
	case syscall.SIGKILL:
		return kill()
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT:
		if windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid)) == nil {
			return nil
		}
		return kill()
	}
	return &SignalError{Signal: sig}
}
