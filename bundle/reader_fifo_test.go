//go:build unix

package bundle

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenRefusesNonRegularFiles: a named pipe called run.zst (which would
// block the open until something writes to it) and a device are refused at
// once, with an error naming what they are.
func TestOpenRefusesNonRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "run.zst")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for path, want := range map[string]string{
		fifo:        fifo + " is a named pipe (FIFO), not a bundle file",
		"/dev/null": "/dev/null is a device, not a bundle file",
		t.TempDir(): "is a directory, not a bundle file",
	} {
		_, err := Open(path, nil)
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s) = %v, want a *FormatError saying %q", path, err, want)
		}
	}
}
