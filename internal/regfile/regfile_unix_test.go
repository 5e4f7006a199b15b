//go:build unix

package regfile_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/internal/regfile"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.txt")
	if err := os.WriteFile(file, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		what string // "" for a file Open opens
	}{
		{file, ""},
		{link, ""},
		{dir, "a directory"},
		{fifo, "a named pipe (FIFO)"}, // would block the open forever if opened
		{sock, "a socket"},
		{"/dev/null", "a device"},
		{"/dev/urandom", "a device"},
	} {
		f, err := regfile.Open(tc.path)
		var got string
		var nr *regfile.NotRegularError
		switch {
		case err == nil:
			f.Close()
		case errors.As(err, &nr):
			got = nr.What
			if nr.Path != tc.path {
				t.Errorf("%s: the error names %s", tc.path, nr.Path)
			}
		default:
			t.Fatalf("%s: %v", tc.path, err)
		}
		if diff := cmp.Diff(tc.what, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.path, diff)
		}
	}
	if _, err := regfile.Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want an error that is os.ErrNotExist", err)
	}
}
