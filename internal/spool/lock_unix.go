//go:build unix

package spool

import (
	"os"
	"syscall"
)

// openManifest opens a job's manifest for reading and locking.
func openManifest(path string) (*os.File, error) { return os.Open(path) }

// lockManifest takes an exclusive flock of f without waiting: it fails at
// once (EWOULDBLOCK) while another open file description holds it. The lock
// goes with the descriptor, even when the process dies.
func lockManifest(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// unlockManifest does nothing: closing f releases its flock.
func unlockManifest(*os.File) {}
