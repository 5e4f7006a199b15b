package jsonscan

// Scanner walks one JSON text from the front, for decoders that read the
// values they need and skip the rest in the same pass. Every method that
// reads a value skips the whitespace before it first; each returns false
// when the input is not valid JSON there, leaving the position undefined.
type Scanner struct {
	b []byte
	i int
}

// NewScanner returns a Scanner at the start of b.
func NewScanner(b []byte) Scanner { return Scanner{b: b} }

// Pos is the index of the next byte to scan.
func (s *Scanner) Pos() int { return s.i }

// Seek moves to index i of the text.
func (s *Scanner) Seek(i int) { s.i = i }

// Since returns the text from index start to the position, capped so that
// appending to it cannot overwrite what follows.
func (s *Scanner) Since(start int) []byte { return s.b[start:s.i:s.i] }

// Rest returns the text not scanned yet.
func (s *Scanner) Rest() []byte { return s.b[s.i:] }

// Space skips whitespace.
func (s *Scanner) Space() { s.i = SkipSpace(s.b, s.i) }

// Peek returns the next byte that is not whitespace, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.Space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// Consume consumes c if it is the next byte that is not whitespace.
func (s *Scanner) Consume(c byte) bool {
	if s.Peek() == c {
		s.i++
		return true
	}
	return false
}

// End reports whether only whitespace is left.
func (s *Scanner) End() bool {
	s.Space()
	return s.i == len(s.b)
}

// Literal consumes lit if it comes next, without skipping whitespace.
func (s *Scanner) Literal(lit string) bool {
	if hasLiteral(s.b, s.i, lit) {
		s.i += len(lit)
		return true
	}
	return false
}

// Null consumes a null if one comes next.
func (s *Scanner) Null() bool { return s.Peek() == 'n' && s.Literal("null") }

// Bool scans true or false.
func (s *Scanner) Bool() (v, ok bool) {
	switch s.Peek() {
	case 't':
		return true, s.Literal("true")
	case 'f':
		return false, s.Literal("false")
	}
	return false, false
}

// String scans a string and returns its token (quotes included) and its
// contents; escaped reports that they hold a backslash escape (see
// AppendUnquote). Contents without escapes that are valid UTF-8 are the
// string's value as they are.
func (s *Scanner) String() (tok, contents []byte, escaped, ok bool) {
	if s.Peek() != '"' {
		return nil, nil, false, false
	}
	start := s.i
	end, escaped := StringEnd(s.b, start+1)
	if end < 0 {
		return nil, nil, false, false
	}
	s.i = end
	contents = s.b[start+1 : end-1 : end-1]
	return s.b[start:end:end], contents, escaped, true
}

// Number scans a number and returns its token.
func (s *Scanner) Number() ([]byte, bool) {
	s.Space()
	start := s.i
	end := NumberEnd(s.b, start)
	if end < 0 {
		return nil, false
	}
	s.i = end
	return s.b[start:end:end], true
}

// Skip scans any value found at nesting depth (see the package function Skip).
func (s *Scanner) Skip(depth int) bool {
	s.Space()
	end := Skip(s.b, s.i, depth)
	if end < 0 {
		return false
	}
	s.i = end
	return true
}

// SkipMemo is Skip taking what m holds by a memcmp (see the package
// function SkipMemo).
func (s *Scanner) SkipMemo(depth int, m *Memo) bool {
	s.Space()
	end := SkipMemo(s.b, s.i, depth, m)
	if end < 0 {
		return false
	}
	s.i = end
	return true
}

// Raw scans any value found at nesting depth and returns its exact bytes, as
// a json.RawMessage gets them.
func (s *Scanner) Raw(depth int) ([]byte, bool) {
	s.Space()
	start := s.i
	if !s.Skip(depth) {
		return nil, false
	}
	return s.Since(start), true
}

// Object scans an object found at nesting depth, calling field for each key
// with the scanner before the value; field must consume the value (at
// depth+1) and return whether it could. key is the key's contents; plain
// says they are its value as they are and only ASCII, so comparing them with
// a field name byte for byte or by ASCII case is exact.
func (s *Scanner) Object(depth int, field func(key []byte, plain bool) bool) bool {
	if depth >= MaxDepth || !s.Consume('{') {
		return false
	}
	if s.Consume('}') {
		return true
	}
	for {
		_, key, escaped, ok := s.String()
		if !ok || !s.Consume(':') || !field(key, !escaped && ASCII(key)) {
			return false
		}
		if s.Consume(',') {
			continue
		}
		return s.Consume('}')
	}
}

// Array scans an array found at nesting depth, calling elem for each
// element; elem must consume it (at depth+1) and return whether it could.
func (s *Scanner) Array(depth int, elem func() bool) bool {
	if depth >= MaxDepth || !s.Consume('[') {
		return false
	}
	if s.Consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.Consume(',') {
			continue
		}
		return s.Consume(']')
	}
}
