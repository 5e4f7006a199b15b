//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time this process has used, user and system: what a
// benchmark's work costs, whatever else the machine is doing.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
