//go:build unix

package spool

import "os"

// openManifest opens a job's manifest for reading and locking.
func openManifest(path string) (*os.File, error) { return os.Open(path) }
