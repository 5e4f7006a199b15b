// Package repeat spares a check of a payload that repeats the last one it
// passed. A recording of an agent server repeats its larger payloads byte for
// byte: a client polls the same list of threads, a snapshot is fetched again
// unchanged. When a check's answer depends on the payload's bytes alone
// (and on a key that names what was checked against, such as a set of
// secrets), a payload equal to one that passed under the same key passes
// too, and a comparison, which stops at the first differing byte, answers
// for the check: about 0.5 µs for a 20 KiB body, against 20 µs for the
// bundle writer's JSON check and 24-60 µs for the redactor's search.
//
// A Memo keeps, per entry of a pool (about one per processor, so concurrent
// checks neither share nor lock one, and the GC frees idle ones), the last
// payload of Min to Max bytes that passed. Only a payload that passed is
// kept, so one that fails is checked every time. A payload that differs
// costs the comparison and one copy into the entry, within the spread of
// the checks it spares (bundle's BenchmarkValidJSONLineMemo); an entry
// keeps Max bytes at most.
package repeat

import (
	"bytes"
	"sync"
)

// Min and Max bound the payloads a Memo keeps: a smaller one is checked
// about as fast as it is compared (a 1 KiB WebSocket message), a larger
// one would keep too much memory per processor.
const (
	Min = 4 << 10
	Max = 1 << 20
)

// Memo remembers the last payloads that passed a check, under a key. The
// zero value is ready; a Memo must not be copied after first use.
type Memo[K comparable] struct {
	pool sync.Pool
}

type entry[K comparable] struct {
	key K
	b   []byte
}

// Passes reports whether b passes check, which must depend on b's bytes and
// on key alone: true without calling check when b equals the last payload
// that passed under key in the entry it draws.
func (m *Memo[K]) Passes(key K, b []byte, check func([]byte) bool) bool {
	if len(b) < Min || len(b) > Max {
		return check(b)
	}
	e, _ := m.pool.Get().(*entry[K])
	if e == nil {
		e = new(entry[K])
	}
	defer m.pool.Put(e)
	if e.key == key && bytes.Equal(e.b, b) {
		return true
	}
	if !check(b) {
		return false
	}
	e.key, e.b = key, append(e.b[:0], b...)
	return true
}
