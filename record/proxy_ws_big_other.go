//go:build !linux

package record

// mapBig returns nil: big messages are held on the Go heap.
func mapBig(n int) []byte { return nil }

// unmapBig is never called: mapBig maps nothing.
func unmapBig(b []byte) {}
