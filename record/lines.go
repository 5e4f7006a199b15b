package record

import (
	"encoding/json"
	"unicode/utf8"
)

// MaxLineBytes is the default cap on one recorded line. A longer line is
// recorded as several events of at most this many bytes each, so a process that
// writes without newlines can never make the recorder buffer without bound.
const MaxLineBytes = 1 << 20

// lineEnd says how a piece of a stream emitted by lineSplitter ended.
type lineEnd int

const (
	// endNewline: the piece is a whole line; its '\n' was removed.
	endNewline lineEnd = iota
	// endCap: the line was longer than the cap; the next piece continues it.
	endCap
	// endEOF: the stream ended without a final newline.
	endEOF
)

// attrs returns the event attributes that mark a piece that is not a whole
// line, so a reader can tell a split line or a missing final newline from
// ordinary lines and rebuild the stream byte for byte.
func (e lineEnd) attrs() json.RawMessage {
	switch e {
	case endCap:
		return json.RawMessage(`{"partial":true}`)
	case endEOF:
		return json.RawMessage(`{"noNewline":true}`)
	}
	return nil
}

// lineSplitter cuts a byte stream, fed in chunks of any size, into lines.
//
// Each line is handed to emit without its '\n' (a '\r' before it is kept: the
// pieces plus their endings rebuild the input exactly). A line longer than max
// bytes is handed over in pieces of at most max bytes, cut before a UTF-8
// sequence where one starts close to the cap, so text stays text. Memory is
// bounded by max. The slice given to emit is only valid during the call.
//
// A lineSplitter is not safe for concurrent use.
type lineSplitter struct {
	max  int
	buf  []byte // the start of an unfinished line, len(buf) <= max
	emit func(line []byte, end lineEnd)
}

func newLineSplitter(max int, emit func(line []byte, end lineEnd)) *lineSplitter {
	if max <= 0 {
		max = MaxLineBytes
	}
	return &lineSplitter{max: max, emit: emit}
}

// Write feeds p to the splitter. It never fails.
func (s *lineSplitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		limit := s.max - len(s.buf) // bytes the current line may still take
		if i := indexNewline(p, limit); i >= 0 {
			s.emitJoined(p[:i], endNewline)
			p = p[i+1:]
			continue
		}
		if len(p) <= limit {
			s.buf = append(s.buf, p...)
			break
		}
		// More than limit bytes follow and none of them ends the line: the
		// line is longer than the cap, emit one piece.
		s.buf = append(s.buf, p[:limit]...)
		p = p[limit:]
		cut := cutPoint(s.buf)
		rest := append([]byte(nil), s.buf[cut:]...)
		s.emit(s.buf[:cut], endCap)
		s.buf = append(s.buf[:0], rest...)
	}
	return n, nil
}

// Flush emits an unfinished last line, if any, as the end of the stream.
func (s *lineSplitter) Flush() {
	if len(s.buf) > 0 {
		s.emit(s.buf, endEOF)
		s.buf = s.buf[:0]
	}
}

// emitJoined emits the buffered start of a line followed by tail.
func (s *lineSplitter) emitJoined(tail []byte, end lineEnd) {
	if len(s.buf) == 0 {
		s.emit(tail, end)
		return
	}
	s.buf = append(s.buf, tail...)
	s.emit(s.buf, end)
	s.buf = s.buf[:0]
}

// indexNewline returns the index of the first '\n' among the first limit+1
// bytes of p (a newline right at the cap still ends the line), or -1.
func indexNewline(p []byte, limit int) int {
	if limit+1 < len(p) {
		p = p[:limit+1]
	}
	for i, c := range p {
		if c == '\n' {
			return i
		}
	}
	return -1
}

// cutPoint returns where to cut a full buffer: at its end, or before a UTF-8
// sequence that starts within the last three bytes and is not complete.
func cutPoint(b []byte) int {
	for back := 1; back <= utf8.UTFMax-1 && back < len(b); back++ {
		i := len(b) - back
		if utf8.RuneStart(b[i]) {
			if b[i] >= utf8.RuneSelf && !utf8.FullRune(b[i:]) {
				return i
			}
			return len(b)
		}
	}
	return len(b)
}
