package filelock_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wireproof/wireproof/internal/filelock"
)

// TestTryLock: a second open of a locked file cannot take its lock until
// the first is released and closed.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := open(), open()
	defer b.Close()
	if err := filelock.TryLock(a); err != nil {
		t.Fatalf("the first lock: %v", err)
	}
	if err := filelock.TryLock(b); err == nil {
		t.Fatal("a second open took the lock the first holds")
	}
	filelock.Unlock(a)
	a.Close()
	if err := filelock.TryLock(b); err != nil {
		t.Fatalf("the lock once the first is closed: %v", err)
	}
	filelock.Unlock(b)
}
