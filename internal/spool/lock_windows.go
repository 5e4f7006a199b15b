//go:build windows

package spool

import (
	"os"

	"golang.org/x/sys/windows"
)

// openManifest opens a job's manifest for reading and locking. Unlike
// os.Open it shares the file for deletion too, so Done can remove a
// manifest whose lock it holds, and a manifest can be removed or renamed
// while another process has it open, as on unix. (A manifest removed while
// open stays listed until its last handle closes, but can no longer be
// opened: Pending passes it over as sent.)
func openManifest(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	h, err := windows.CreateFile(p, windows.GENERIC_READ, share, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// allBytes is the length of the locked range: the whole file, however long
// (as cmd/go's lockedfile does).
const allBytes = ^uint32(0)

// lockManifest takes an exclusive lock of f without waiting: it fails at
// once (ERROR_LOCK_VIOLATION) while another handle holds it. Windows locks
// are mandatory: other handles cannot read the file while it is locked, but
// every reader of a manifest (Pending) locks it first and reads through the
// locking handle.
func lockManifest(f *os.File) error {
	const flags = windows.LOCKFILE_EXCLUSIVE_LOCK | windows.LOCKFILE_FAIL_IMMEDIATELY
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, allBytes, allBytes, new(windows.Overlapped))
}

// unlockManifest releases f's lock before it is closed: Windows releases
// the locks of a closed handle only eventually, and a sender that looks at
// once must find the job free.
func unlockManifest(f *os.File) {
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, allBytes, allBytes, new(windows.Overlapped))
}
