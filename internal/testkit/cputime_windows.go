//go:build windows

package testkit

import (
	"time"

	"golang.org/x/sys/windows"
)

// CPUTime is the CPU time this process has used, user and system: what a
// benchmark's work costs, whatever else the machine is doing.
func CPUTime() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user) != nil {
		return 0
	}
	return ticks(kernel) + ticks(user)
}

// ticks is a FILETIME that holds a duration, in 100 ns intervals.
func ticks(ft windows.Filetime) time.Duration {
	return time.Duration(uint64(ft.HighDateTime)<<32|uint64(ft.LowDateTime)) * 100
}
