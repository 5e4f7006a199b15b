package redact

import (
	"bytes"
	"strings"
)

// maxFieldHold bounds how much of an unfinished token field (`"token":"...`
// without its closing quote) a stream holds back waiting for the rest. A
// value longer than this is no credential; it is released as it stands.
const maxFieldHold = 64 << 10

// A Stream splits a byte stream that arrives in chunks (a streamed HTTP
// body, server-sent events, a WebSocket message read frame by frame) into
// pieces that can each be redacted on their own: a secret, or a token field
// and its value, is never cut between two pieces.
//
// Next returns at once every byte that cannot be the start of a secret (in
// any spelling) or of an unfinished token field, and holds back only the
// tail that could be, until a later chunk decides it. The hold-back is
// bounded by the longest spelling of the longest secret (12 bytes per
// character) and by maxFieldHold for a token field. A chunk that ends with
// nothing of the kind is released whole, so recording a stream never waits
// for its next chunk.
//
// The pieces are not redacted yet: the recording redacts every event (and
// learns the values of token fields) when it records it (record's
// Recorder.Emit calls Redactor.Event).
//
// Use: s := NewStream(red); record s.Next(chunk) for each chunk as it
// arrives, then s.Flush(true) at the end of the stream, or s.Flush(false)
// when it was cut short.
type Stream struct {
	red  *Redactor
	held []byte // owned by the stream
}

// NewStream returns a Stream cut with the secrets of red.
func NewStream(red *Redactor) *Stream { return &Stream{red: red} }

// Next takes the next chunk and returns the piece that can be recorded now. The
// piece may share memory with chunk; it never shares it with the stream.
func (s *Stream) Next(chunk []byte) []byte {
	buf := chunk
	if len(s.held) > 0 {
		buf = append(s.held, chunk...) // s.held has no spare capacity: a new array
	}
	cut := s.red.cut(buf)
	s.held = append([]byte(nil), buf[cut:]...)
	return buf[:cut]
}

// Flush returns what is held back at the end of the stream. If the stream was
// cut short (ended is false: the body cap was reached, the connection died)
// the held tail may be the start of a secret whose end was never seen, and it
// is dropped rather than recorded.
func (s *Stream) Flush(ended bool) []byte {
	b := s.held
	s.held = nil
	if !ended {
		return nil
	}
	return b
}

// cut returns the length of the longest prefix of b that can be redacted
// without knowing what follows b: no secret spelling and no token field may
// run from it past the end of b. It first learns the values of the token
// fields complete in b, so that the rest of b is cut with them known.
//
// A b with no token field name in it (most bodies) is searched for names
// once: then there is nothing to learn and no field to keep whole, and only
// a trailing word that may begin a name is held.
func (r *Redactor) cut(b []byte) int {
	names := r.fields.hintMemo(b)
	hold := r.fields.holdWord(b)
	if names {
		hold = r.fields.hold(b, hold)
		r.learn(b[:hold])
	}
	set := r.Snapshot()
	cut := len(b)
	var spans []span
	if set.m != nil {
		spans, cut = set.find(b)
	}
	cut = min(cut, hold)
	// A complete occurrence or field straddling the cut goes whole to the
	// next piece.
	if names {
		r.fields.eachSpan(b, func(sp span) { spans = append(spans, sp) })
	}
	for moved := true; moved; {
		moved = false
		for _, sp := range spans {
			if sp.start < cut && cut < sp.end {
				cut, moved = sp.start, true
			}
		}
	}
	return cut
}

// eachSpan calls fn with the span from the name of each complete token field
// in b to the end of its value.
func (fs *fieldSet) eachSpan(b []byte, fn func(span)) {
	fs.each(b, func(start, end int) bool {
		if f, ok := fieldValue(b, end); ok {
			fn(span{start, f.end})
		}
		return true
	})
}

// holdWord returns where a trailing word of b that may be the start of a
// token field name begins (len(b) if there is none).
func (fs *fieldSet) holdWord(b []byte) int {
	l := len(b)
	for l > 0 && isIdent(b[l-1]) {
		l--
	}
	if l < len(b) && fs.hasPrefix(b[l:]) {
		return l
	}
	return len(b)
}

// hold returns where the tail of b that may be an unfinished token field
// begins (len(b) if there is none): a field name whose value b ends before,
// or a trailing word that may be the start of a field name, which begins at
// hold (holdWord's answer).
func (fs *fieldSet) hold(b []byte, hold int) int {
	from := max(0, len(b)-maxFieldHold)
	fs.each(b[from:], func(start, end int) bool {
		if start+from < hold && fieldUnfinished(b, end+from) {
			hold = start + from
		}
		return true
	})
	return hold
}

// hasPrefix reports whether w may be the start of a token field name.
func (fs *fieldSet) hasPrefix(w []byte) bool {
	for _, f := range fs.names {
		if len(w) <= len(f) && strings.EqualFold(f[:len(w)], string(w)) {
			return true
		}
	}
	return false
}

// fieldUnfinished reports whether b ends before the value of the token field
// whose name ends at p is complete (see fieldValue for the forms).
func fieldUnfinished(b []byte, p int) bool {
	quoted := false
	switch {
	case p >= len(b):
		return true
	case b[p] == '"':
		quoted = true
		p++
	case b[p] == '\\':
		if p+1 >= len(b) {
			return true
		}
		if b[p+1] == '"' {
			quoted = true
			p += 2
		}
	}
	p = skipSpace(b, p)
	if p >= len(b) || !quoted && b[p] == '%' && (p+3 > len(b) || isEncodedEquals(b[p:])) {
		// name%3Dvalue runs on until an encoded & or a value end.
		if p+3 <= len(b) {
			for q := p + 3; q < len(b); q++ {
				if isValueEnd(b[q]) || isEncodedAmp(b[q:]) {
					return false
				}
			}
		}
		return true
	}
	if b[p] != ':' && b[p] != '=' {
		return false
	}
	sep := b[p]
	p = skipSpace(b, p+1)
	if p >= len(b) {
		return true
	}
	switch {
	case b[p] == '"':
		for q := p + 1; q < len(b); q++ {
			switch b[q] {
			case '\\':
				q++
			case '"':
				return false
			}
		}
		return true
	case b[p] == '\\':
		if p+1 >= len(b) {
			return true
		}
		if b[p+1] == '"' {
			return !bytes.Contains(b[p+2:], []byte(`\"`))
		}
		return false
	case sep == '=' || !quoted:
		for ; p < len(b); p++ {
			if isValueEnd(b[p]) {
				return false
			}
		}
		return true
	}
	return false
}
