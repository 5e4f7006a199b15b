package redact

import "bytes"

// maxEvent bounds one server-sent event an EventStream frames: an event that
// grows past it without its blank line is no stream of deltas, and the body
// goes on as a Stream alone.
const maxEvent = 1 << 20

// An EventStream cuts a server-sent event body (text/event-stream) that
// arrives in chunks, as a Stream does, and also redacts the texts its events
// stream as deltas: it frames the body into events at blank lines, passes
// each event through a Deltas, and the events that releases through a
// Stream. Its Next and Flush are Stream's; what it returns is the body's
// bytes, with a secret split across deltas rewritten. A body that turns out
// not to be events (no blank line within maxEvent bytes) goes on through the
// Stream alone, as any body does.
type EventStream struct {
	deltas *Deltas
	bytes  *Stream
	buf    []byte // the start of an unfinished event
	plain  bool   // not events after all
}

// NewEventStream returns an EventStream cut and redacted with the secrets of
// red.
func NewEventStream(red *Redactor) *EventStream {
	return &EventStream{deltas: NewDeltas(red), bytes: NewStream(red)}
}

// Next takes the next chunk and returns the piece that can be recorded now.
// The piece never shares memory with the chunk or the stream.
func (s *EventStream) Next(chunk []byte) []byte {
	if s.plain {
		return s.bytes.Next(chunk)
	}
	buf := append(s.buf, chunk...)
	var out []byte
	for {
		n := EventLen(buf)
		if n < 0 {
			break
		}
		// The event is the Deltas' from now on: buf is not written again
		// (what is left of it is copied below).
		for _, m := range s.deltas.Next(buf[:n:n]) {
			out = append(out, m...)
		}
		buf = buf[n:]
	}
	s.buf = append([]byte(nil), buf...)
	if len(s.buf) > maxEvent {
		// Not events: what is held goes on as it stands (a held tail that
		// may begin a secret is dropped: the deltas end here).
		for _, m := range s.deltas.Flush(false) {
			out = append(out, m...)
		}
		out = append(out, s.buf...)
		s.buf, s.plain = nil, true
	}
	return s.bytes.Next(out)
}

// Flush returns what is held back at the end of the body: the held events,
// and an unfinished last event (as an event, if the body ended; as bytes,
// its tail that could begin a secret dropped, if it was cut short).
func (s *EventStream) Flush(ended bool) []byte {
	var out []byte
	if ended && len(s.buf) > 0 {
		out = append(out, s.flushDeltas(s.deltas.Next(s.buf))...)
		s.buf = nil
	}
	out = append(out, s.flushDeltas(s.deltas.Flush(ended))...)
	out = append(out, s.buf...)
	s.buf = nil
	out = s.bytes.Next(out)
	return append(out, s.bytes.Flush(ended)...)
}

func (s *EventStream) flushDeltas(ms [][]byte) []byte {
	var out []byte
	for _, m := range ms {
		out = append(out, m...)
	}
	return out
}

// EventLen returns the length of the first complete server-sent event of b
// (up to and including the blank line that ends it: LF LF, CR LF CR LF or
// CR CR), or -1 if b holds none.
func EventLen(b []byte) int {
	for i := 0; i < len(b); {
		k := bytes.IndexAny(b[i:], "\r\n")
		if k < 0 {
			return -1
		}
		j := i + k
		for _, sep := range []string{"\n\n", "\r\n\r\n", "\r\r"} {
			if bytes.HasPrefix(b[j:], []byte(sep)) {
				return j + len(sep)
			}
		}
		i = j + 1
	}
	return -1
}
