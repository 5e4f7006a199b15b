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
