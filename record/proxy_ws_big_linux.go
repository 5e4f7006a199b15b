//go:build linux

package record

import "syscall"

// mapBig returns a buffer of n bytes outside the Go heap for a big
// WebSocket message, or nil if it cannot be had (the caller then uses the
// heap). Only the pages a message writes are ever faulted in, so it can be
// as large as the recording limit; the garbage collector neither zeroes it
// first (a pass over 64 MiB of fresh memory, page fault by page fault) nor
// counts it towards its next cycle. (Huge pages were tried: the kernel's
// zeroing of each 2 MiB page cost more than the small pages' faults.) It
// must be given back with unmapBig once nothing refers to it.
func mapBig(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	return b[:0]
}

// unmapBig gives back a buffer of mapBig.
func unmapBig(b []byte) {
	_ = syscall.Munmap(b[:cap(b)])
}
