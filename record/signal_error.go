package record

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

// SignalError is returned for a signal this system cannot deliver: on
// Windows, by Group.Signal for any signal but SIGKILL, SIGINT, SIGTERM,
// SIGHUP, SIGQUIT and 0. It wraps errors.ErrUnsupported.
type SignalError struct {
	Signal syscall.Signal
}

func (e *SignalError) Error() string {
	return fmt.Sprintf("record: %s cannot be sent on %s", signalName(e.Signal), runtime.GOOS)
}

// Unwrap returns errors.ErrUnsupported.
func (e *SignalError) Unwrap() error { return errors.ErrUnsupported }
