package redact

import (
	"bytes"
	"sync"
)

// This file spares the search for secrets in a text the same set has just
// found none in. A recording repeats its larger payloads byte for byte (a
// client polls the same list of threads), and the search of a 20 KiB body
// takes 50-60 µs whatever the number of secrets (BenchmarkFind), more than
// the rest of recording it. A Set never changes (a secret learned makes a
// new one), and what it finds in a text depends on the text alone, so a
// text equal to one the same Set found nothing in holds nothing: a
// comparison, which stops at the first differing byte, answers for the
// search.
//
// Each memo holds the last text of memoMin to memoMax bytes its Set found
// nothing in; a pool keeps about one per processor, so concurrent events
// neither share nor lock one, and the GC frees idle ones. Only a text with
// nothing found is remembered: a text that holds a secret is searched every
// time, so a memo can never hide one. (bundle's encode_memo.go does the
// same for the writer's JSON check.)

// memoMin and memoMax bound the texts a memo holds: a smaller one is
// searched nearly as fast as it is compared, a larger one would keep too
// much memory per processor.
const (
	memoMin = 4 << 10
	memoMax = 1 << 20
)

// textMemo is the last text a Set found nothing in.
type textMemo struct {
	set  *Set
	text []byte
}

var textMemos = sync.Pool{New: func() any { return new(textMemo) }}

// findTextMemo is findText, answered from a memo for a text equal to the
// last one s found nothing in on this processor.
func (s *Set) findTextMemo(b []byte) []span {
	if s.m == nil || len(b) < memoMin || len(b) > memoMax {
		return s.findText(b)
	}
	m := textMemos.Get().(*textMemo)
	defer textMemos.Put(m)
	if m.set == s && bytes.Equal(m.text, b) {
		return nil
	}
	spans := s.findText(b)
	if len(spans) == 0 {
		m.set, m.text = s, append(m.text[:0], b...)
	}
	return spans
}
