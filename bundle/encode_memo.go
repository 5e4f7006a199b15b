package bundle

import (
	"bytes"
	"sync"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// This file spares the writer's JSON check for a payload it has just checked.
// A recording of an agent server repeats its larger payloads byte for byte:
// a client polls the same list of threads, a snapshot is fetched again
// unchanged. Equal bytes are the same valid value, so a payload equal to one
// already found valid is valid without a scan: a comparison, which stops at
// the first differing byte, costs a fraction of the scan (a 20 KiB body of
// threads on two EPYC cores: 0.45 µs against 20 µs, BenchmarkValidJSONLineMemo).
//
// Each memo holds the last valid payload its goroutine checked; a pool keeps
// about one per processor, so concurrent exchanges neither share nor lock
// one, and the GC frees idle ones. A payload that differs costs the
// comparison and one copy into the memo, which stay within the spread of its
// scan (at worst, a difference in the last byte: 19-21 µs against 20-21), and
// a memo keeps memoMax bytes at most, so the memos hold at most memoMax per
// concurrent check.

// memoMin and memoMax bound the payloads the memo holds: a smaller one is
// scanned about as fast as it is compared (a 1 KiB WebSocket message), a
// larger one would keep too much memory per processor.
const (
	memoMin = 4 << 10
	memoMax = 1 << 20
)

var lineMemos = sync.Pool{New: func() any { return new([]byte) }}

// validJSONLineMemo is validJSONLine, answered from a memo when b equals
// the last valid payload checked with the memo it is given from the pool.
func validJSONLineMemo(b []byte) bool {
	if len(b) < memoMin || len(b) > memoMax {
		return jsonscan.ValidLine(b)
	}
	m := lineMemos.Get().(*[]byte)
	defer lineMemos.Put(m)
	if bytes.Equal(*m, b) {
		return true
	}
	if !jsonscan.ValidLine(b) {
		return false
	}
	*m = append((*m)[:0], b...)
	return true
}
