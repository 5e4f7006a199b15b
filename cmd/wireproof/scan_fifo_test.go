//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScanRefusesWhatIsNoFile: a named pipe that is not called *.zst and a
// device are refused at once, by name, with exit 3 (a FIFO blocked scan's
// open until something wrote to it, and /dev/urandom never ended), and the
// regular file beside them is still scanned.
func TestScanRefusesWhatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("nothing to see\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arg, what string
	}{
		{fifo, "a named pipe (FIFO)"},
		{"/dev/urandom", "a device"},
		{"/dev/null", "a device"},
	} {
		code, _, errOut := runCLI(t, "scan", tc.arg, text)
		want := []string{
			"no credential-looking string in 1 file(s) scanned; 1 could not be read in full",
			"wireproof: " + tc.arg + " is " + tc.what + ", not a regular file: scan reads bundles and text files only",
		}
		if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(errOut), "\n")); code != exitUnreadable || diff != "" {
			t.Errorf("scan %s: exit %d, want %d; stderr (-want +got):\n%s", tc.arg, code, exitUnreadable, diff)
		}
	}
}

// TestScanLongLine: a text file's line over the limit is named by its
// number, and the file is not counted as scanned.
func TestScanLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.log")
	long := make([]byte, maxScanLine+1)
	for i := range long {
		long[i] = 'a'
	}
	if err := os.WriteFile(path, append([]byte("first\n"), long...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "scan", path)
	if code != exitUnreadable || !strings.Contains(errOut, path+":2: a line longer than 64 MiB: scan could not read the rest of the file") {
		t.Errorf("scan of a long line: exit %d, want %d\n%s", code, exitUnreadable, errOut)
	}
}
