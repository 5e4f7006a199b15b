//go:build unix && !linux

package record

import (
	"os/exec"
	"syscall"
)

// setDeathSignal does nothing where the kernel has no parent-death signal;
// the process group watchdog (see startGroupWatchdog) still covers
// supervised servers.
func setDeathSignal(*exec.Cmd, syscall.Signal) {}
