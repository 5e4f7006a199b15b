// Package regfile opens files that must be regular files: a named pipe
// would block the open, and every read, until something writes to it, and a
// device (/dev/zero, /dev/urandom) never ends, so a reader that means to
// read a file to its end refuses both before it opens them.
package regfile

import (
	"os"
)

// NotRegularError says that a path is not a regular file, and what it is.
type NotRegularError struct {
	Path string
	What string // "a directory", "a named pipe (FIFO)", "a socket", "a device", "not a regular file"
}

func (e *NotRegularError) Error() string {
	return e.Path + " is " + e.What + ", not a regular file"
}

// Open opens path for reading. What is not a regular file is refused with a
// *NotRegularError, looked at before the open (which a named pipe would
// block) and again on the file opened (replaced since the first look).
func Open(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := Check(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = Check(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Check returns a *NotRegularError if fi, the file at path, is not a
// regular file.
func Check(path string, fi os.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		what = "a socket"
	case m&os.ModeDevice != 0:
		what = "a device"
	}
	return &NotRegularError{Path: path, What: what}
}
