//go:build windows

package verify

import (
	"errors"

	"golang.org/x/sys/windows"
)

// processAlive reports whether process pid, started at start (0: unknown),
// still runs. A pid that exists but was started at another time belongs to
// another process: the owner is dead and its pid reused. A process that
// cannot be opened for want of rights is kept, as one that cannot be told.
func processAlive(pid int, start uint64) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return false // no such process
	}
	if err != nil {
		return true // cannot tell: keep
	}
	defer windows.CloseHandle(h)
	if ev, err := windows.WaitForSingleObject(h, 0); err == nil && ev == windows.WAIT_OBJECT_0 {
		return false // exited; a handle someone holds keeps its id
	}
	if start == 0 {
		return true
	}
	now := creationTime(h)
	return now == 0 || now == start
}

// processStart is pid's creation time (a FILETIME: 100 ns intervals since
// 1601), or 0 where it cannot be read.
func processStart(pid int) uint64 {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return 0
	}
	defer windows.CloseHandle(h)
	return creationTime(h)
}

// creationTime is the creation time of process h, or 0.
func creationTime(h windows.Handle) uint64 {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) != nil {
		return 0
	}
	return uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime)
}
