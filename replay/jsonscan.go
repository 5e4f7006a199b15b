package replay

// This file is the strict JSON scanner under the lean decoders (lean.go). It
// accepts exactly what encoding/json's validator accepts; wherever the value
// encoding/json would produce is not obvious (escaped or non-ASCII text,
// numbers that are not plain integers, very deep nesting), it gives up and the
// caller decodes with encoding/json instead, so results never differ.

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// maxLeanDepth bounds the nesting the scanner follows; deeper input is left to
// encoding/json (which allows 10000 levels and reports the rest as an error).
const maxLeanDepth = 512

// strStop marks the bytes that end a run of plain string content: the quote,
// the backslash and the control characters JSON forbids raw.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// scanner walks one JSON text. Every method returns false when the input is
// not what the lean decoder can decode exactly (invalid JSON included); the
// caller then falls back to encoding/json.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) consume(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// skipString scans a string (the opening quote next) and reports whether it
// is valid and whether it has escapes or non-ASCII bytes (then its Go value is
// left to encoding/json).
func (s *scanner) skipString() (ok, plain bool) {
	s.i++ // the quote
	plain = true
	b := s.b
	var high uint64 // the high bits of the bytes skipped eight at a time
	for i := s.i; i < len(b); {
		// Eight bytes at a time while none of them stops the run.
		for len(b)-i >= 8 {
			x := binary.LittleEndian.Uint64(b[i:])
			if m := stopMask(x); m != 0 {
				high |= x & swarHigh & (m&-m - 1) // the bytes before the stop
				i += bits.TrailingZeros64(m) / 8
				break
			}
			high |= x & swarHigh
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if !strStop[c] {
			if c >= utf8.RuneSelf {
				plain = false
			}
			i++
			continue
		}
		switch {
		case c == '"':
			s.i = i + 1
			return true, plain && high == 0
		case c == '\\':
			plain = false
			if i+1 >= len(b) {
				return false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return false, false
				}
				i += 6
			default:
				return false, false
			}
		default: // a raw control character
			return false, false
		}
	}
	return false, false
}

const (
	swarLow  = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// stopMask has the high bit set in the first byte of x (in memory order)
// that is a quote, a backslash or a control character; later bytes may be
// flagged falsely, the first one never is.
func stopMask(x uint64) uint64 {
	q := x ^ (swarLow * '"')
	bs := x ^ (swarLow * '\\')
	return (((q - swarLow) &^ q) | ((bs - swarLow) &^ bs) | ((x - swarLow*0x20) &^ x)) & swarHigh
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// str scans a string value and returns its raw token (quotes included) and
// contents; plain is false when the contents need unescaping or UTF-8
// repair, which text leaves to encoding/json.
func (s *scanner) str() (tok, contents []byte, plain, ok bool) {
	if s.peek() != '"' {
		return nil, nil, false, false
	}
	start := s.i
	ok, plain = s.skipString()
	if !ok {
		return nil, nil, false, false
	}
	return s.b[start:s.i], s.b[start+1 : s.i-1], plain, true
}

// number scans a number with JSON's grammar and returns its token.
func (s *scanner) number() ([]byte, bool) {
	b, i := s.b, s.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false
		}
	}
	s.i = i
	return b[start:i], true
}

// literal consumes lit if it is next.
func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// skip scans any value, strictly.
func (s *scanner) skip(depth int) bool {
	if depth > maxLeanDepth {
		return false
	}
	switch s.peek() {
	case '"':
		ok, _ := s.skipString()
		return ok
	case '{':
		s.i++
		if s.consume('}') {
			return true
		}
		for {
			if s.peek() != '"' {
				return false
			}
			if ok, _ := s.skipString(); !ok || !s.consume(':') || !s.skip(depth+1) {
				return false
			}
			if s.consume(',') {
				continue
			}
			return s.consume('}')
		}
	case '[':
		s.i++
		if s.consume(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if s.consume(',') {
				continue
			}
			return s.consume(']')
		}
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case 0:
		return false
	default:
		_, ok := s.number()
		return ok
	}
}

// raw scans any value and returns its exact bytes, as json.RawMessage gets them.
func (s *scanner) raw(depth int) ([]byte, bool) {
	s.ws()
	start := s.i
	if !s.skip(depth) {
		return nil, false
	}
	return s.b[start:s.i:s.i], true
}

// object scans an object (the opening brace next), calling field for each key
// with the scanner before the value; field must consume the value.
// Keys that need unescaping or are not ASCII are left to encoding/json,
// which matches them to fields by Unicode case folding.
func (s *scanner) object(depth int, field func(key []byte) bool) bool {
	if depth > maxLeanDepth || !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		_, key, plain, ok := s.str()
		if !ok || !plain || !s.consume(':') || !field(key) {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume('}')
	}
}

// array scans an array (the opening bracket next), calling elem for each element.
func (s *scanner) array(depth int, elem func() bool) bool {
	if depth > maxLeanDepth || !s.consume('[') {
		return false
	}
	if s.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume(']')
	}
}

// keys tracks which known keys of one object were seen: encoding/json merges
// a repeated key into the value decoded so far, which the lean decoders do not
// mimic, so a repeat is left to it.
type keys uint32

func (k *keys) first(bit uint) bool {
	if *k&(1<<bit) != 0 {
		return false
	}
	*k |= 1 << bit
	return true
}

// unknownKey reports whether key may be skipped: encoding/json would match a
// key that equals a known one but for ASCII case to that field, so such a key
// is left to it.
func unknownKey(key []byte, known ...string) bool {
	for _, k := range known {
		if len(k) == len(key) && asciiEqualFold(k, key) {
			return false
		}
	}
	return true
}

func asciiEqualFold(a string, b []byte) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// skipUnknown skips the value of a key no field has, or gives up if
// encoding/json would match it to one of known.
func (s *scanner) skipUnknown(depth int, key []byte, known ...string) bool {
	return unknownKey(key, known...) && s.skip(depth)
}

// strings interns the short strings the projections repeat (statuses, types,
// roles, ids), so decoding thousands of observations does not allocate them
// anew. Bounded so hostile input cannot grow it.
type internTable map[string]string

const (
	maxIntern    = 4096
	maxInternLen = 64
)

func (t internTable) get(b []byte) string {
	if len(b) > maxInternLen || t == nil {
		return string(b)
	}
	if s, ok := t[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(t) < maxIntern {
		t[s] = s
	}
	return s
}

// text scans a string-typed field: a string sets *dst, null leaves it as it
// is (as encoding/json does); anything else is left to encoding/json.
func (s *scanner) text(dst *string, intern internTable) bool {
	if s.null() {
		return true
	}
	tok, contents, plain, ok := s.str()
	if !ok {
		return false
	}
	if plain {
		*dst = intern.get(contents)
		return true
	}
	return json.Unmarshal(tok, dst) == nil // escapes and non-ASCII: encoding/json's own rules, on this token only
}

// skipText checks that a string-typed field the caller does not keep holds a
// string or null.
func (s *scanner) skipText() bool {
	if s.null() {
		return true
	}
	if s.peek() != '"' {
		return false
	}
	ok, _ := s.skipString()
	return ok
}

// integer scans an int-typed field: encoding/json takes only integer tokens
// that fit; null leaves *dst as it is.
func (s *scanner) integer(dst *int) bool {
	if s.null() {
		return true
	}
	s.ws()
	tok, ok := s.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(tok), len(tok)), 10, 0)
	if err != nil {
		return false
	}
	*dst = int(n)
	return true
}

// boolean scans a bool-typed field; null leaves *dst as it is.
func (s *scanner) boolean(dst *bool) bool {
	switch s.peek() {
	case 'n':
		return s.null()
	case 't':
		*dst = true
		return s.literal("true")
	case 'f':
		*dst = false
		return s.literal("false")
	}
	return false
}
