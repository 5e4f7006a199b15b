package delivery

import (
	"bytes"

	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/t3"
)

// projectionMemo remembers the last projections the lean decoder decoded, by
// the exact bytes they were decoded from. A verdict is a pure function of
// the bytes, so a projection that comes again byte for byte (a poll of a
// thread that did not change, the bulk of a long run) is the same
// observation: comparing the bytes costs a memcmp, decoding them again a
// scan. The scenario still observes it each time (checks and the hook of
// Observed see every one); only the decoding is shared. Projections handed out
// are shared between those observations, and nothing modifies them.
//
// Two slots, so the parent's and a child's reads may alternate.
type projectionMemo struct {
	slots [2]memoSlot
	next  int // the slot to fill next
}

type memoSlot struct {
	what memoKind
	raw  []byte // the bytes p was decoded from, a copy
	p    *t3.Projection
}

// memoKind tells apart the shapes a projection arrives in, so the same bytes
// read as another shape are not taken for it.
type memoKind uint8

const (
	memoNone          memoKind = iota
	memoGetProjection          // getThreadProjection's value: the projection
	memoLaunch                 // launchThread's value: {threadId, projection}
	memoThreadRead             // an HTTP thread read's body: {projection}
)

// memoDepth is the nesting the memo's values are decoded at: the depth of
// an Exit's value in a message, so that a value taken from the memo while a
// frame is split (see prefix) is valid where it stands. Decoded alone, a
// value that nests within memoDepth of jsonscan.MaxDepth is left to
// encoding/json, which decides it exactly.
const memoDepth = effectrpc.ExitValueDepth

// maxMemo bounds the bytes a slot keeps: a larger projection is decoded
// every time rather than held twice.
const maxMemo = 4 << 20

// decode returns what decode(raw) returned the last time it was given raw as
// a what, or calls it and remembers a successful result.
func (m *projectionMemo) decode(what memoKind, raw []byte, decode func([]byte) (*t3.Projection, bool)) (*t3.Projection, bool) {
	for i := range m.slots {
		if sl := &m.slots[i]; sl.what == what && bytes.Equal(sl.raw, raw) {
			m.next = 1 - i // keep the slot just used
			return sl.p, true
		}
	}
	p, ok := decode(raw)
	if !ok || len(raw) > maxMemo {
		return p, ok
	}
	sl := &m.slots[m.next]
	sl.what, sl.raw, sl.p = what, append(sl.raw[:0], raw...), p
	m.next = (m.next + 1) % len(m.slots)
	return p, true
}

// prefix returns the length of a value the memo holds that rest starts with,
// or 0. Only objects and arrays qualify: they end at their own closing
// bracket, so equal bytes are the same whole value, where a number could
// go on.
func (m *projectionMemo) prefix(rest []byte) int {
	for i := range m.slots {
		raw := m.slots[i].raw
		if n := len(raw); n > 1 && (raw[0] == '{' && raw[n-1] == '}' || raw[0] == '[' && raw[n-1] == ']') && bytes.HasPrefix(rest, raw) {
			return n
		}
	}
	return 0
}
