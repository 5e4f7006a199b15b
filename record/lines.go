package record

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/wireproof/wireproof/redact"
)

// MaxLineBytes is the default cap on one recorded line. A longer line is
// recorded as several events of about this many bytes each (a piece may end
// earlier, or run on by the tail carried from the piece before it, where a
// secret could straddle the cut), so a process that writes without newlines
// can never make the recorder buffer without bound.
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
// With a Redactor, the pieces of a line longer than max are also cut so that
// no secret of it (in any spelling it redacts) nor token field is split
// between two pieces: each piece passes through a redact.Stream, the tail
// that may begin one moves on to the start of the next piece, and the last
// piece of the line gets what is held. A piece can then be up to the
// Stream's hold-back longer than max, and a piece held whole is not emitted
// (the next one carries it). The pieces still rebuild the line.
//
// A lineSplitter is not safe for concurrent use.
type lineSplitter struct {
	max  int
	buf  []byte // the start of an unfinished line, len(buf) <= max
	emit func(line []byte, end lineEnd)
	red  *redact.Redactor // cuts the pieces of a long line; nil: cut at max
	long *redact.Stream   // the pieces of the current line, once it is past max
}

func newLineSplitter(max int, red *redact.Redactor, emit func(line []byte, end lineEnd)) *lineSplitter {
	if max <= 0 {
		max = MaxLineBytes
	}
	return &lineSplitter{max: max, red: red, emit: emit}
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
		s.piece(s.buf[:cut], endCap)
		s.buf = append(s.buf[:0], rest...)
	}
	return n, nil
}

// Flush emits an unfinished last line, if any, as the end of the stream.
func (s *lineSplitter) Flush() {
	if len(s.buf) > 0 || s.long != nil {
		s.piece(s.buf, endEOF)
		s.buf = s.buf[:0]
	}
}

// emitJoined emits the buffered start of a line followed by tail.
func (s *lineSplitter) emitJoined(tail []byte, end lineEnd) {
	if len(s.buf) == 0 {
		s.piece(tail, end)
		return
	}
	s.buf = append(s.buf, tail...)
	s.piece(s.buf, end)
	s.buf = s.buf[:0]
}

// piece emits b, which ends as end says: as it is, or, for a line cut at
// the cap when there is a Redactor, with the tail that may begin a secret
// held until the next piece of the line.
func (s *lineSplitter) piece(b []byte, end lineEnd) {
	if s.red == nil || end != endCap && s.long == nil {
		s.emit(b, end)
		return
	}
	if s.long == nil {
		s.long = redact.NewStream(s.red)
	}
	b = s.long.Next(b)
	if end == endCap {
		if len(b) > 0 {
			s.emit(b, end)
		}
		return
	}
	// The line ends here: nothing follows that could end a secret.
	b = append(slices.Clip(b), s.long.Flush(true)...)
	s.long = nil
	s.emit(b, end)
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
