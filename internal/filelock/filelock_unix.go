//go:build unix

package filelock

import (
	"os"
	"syscall"
)

// TryLock takes an exclusive lock of f without waiting: it fails at once
// (EWOULDBLOCK) while another open file description holds it. The lock goes
// with the descriptor, even when the process dies.
func TryLock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// Unlock does nothing: closing f releases its flock.
func Unlock(*os.File) {}
