//go:build windows

package filelock

import (
	"os"

	"golang.org/x/sys/windows"
)

// allBytes is the length of the locked range: the whole file, however long
// (as cmd/go's lockedfile does).
const allBytes = ^uint32(0)

// TryLock takes an exclusive lock of f without waiting: it fails at once
// (ERROR_LOCK_VIOLATION) while another handle holds it. Windows locks are
// mandatory: other handles cannot read the file while it is locked.
func TryLock(f *os.File) error {
	const flags = windows.LOCKFILE_EXCLUSIVE_LOCK | windows.LOCKFILE_FAIL_IMMEDIATELY
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, allBytes, allBytes, new(windows.Overlapped))
}

// Unlock releases f's lock before it is closed: Windows releases the locks
// of a closed handle only eventually, and a process that looks at once
// must find the file free.
func Unlock(f *os.File) {
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, allBytes, allBytes, new(windows.Overlapped))
}
