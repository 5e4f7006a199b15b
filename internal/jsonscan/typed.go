package jsonscan

// This file is the typed side of the scanner, for the lean decoders (Effect
// RPC messages in protocol/effectrpc, T3 projections in replay): typed reads
// of the fields they keep, with encoding/json's rules for null and for keys.
// Wherever encoding/json's result is not obvious (a key that is escaped or
// not ASCII, a repeated key, a number that is not a plain integer) a lean
// decoder gives up and its caller decodes with encoding/json instead, so
// results never differ.

import (
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Reader walks one JSON text for a lean decoder. Every method returns false
// when the input is not what the lean decoder can decode exactly (invalid
// JSON included); the caller then falls back to encoding/json.
type Reader struct{ Scanner }

// NewReader returns a Reader at the start of b.
func NewReader(b []byte) Reader { return Reader{NewScanner(b)} }

// Fields scans an object found at nesting depth, calling field for each key
// with the scanner before the value; field must consume the value. Keys that
// need unescaping or are not ASCII are left to encoding/json, which matches
// them to fields by Unicode case folding.
func (s *Reader) Fields(depth int, field func(key []byte) bool) bool {
	return s.Object(depth, func(key []byte, plain bool) bool { return plain && field(key) })
}

// RawInto scans any value found at nesting depth into *dst, as a
// json.RawMessage field gets it (null included, as the text "null").
func (s *Reader) RawInto(dst *[]byte, depth int) bool {
	v, ok := s.Raw(depth)
	*dst = v
	return ok
}

// Keys tracks which known keys of one object were seen: encoding/json merges
// a repeated key into the value decoded so far, which the lean decoders do not
// mimic, so a repeat is left to it.
type Keys uint32

// First reports whether the known key numbered bit is seen for the first
// time, and notes it.
func (k *Keys) First(bit uint) bool {
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

// SkipUnknown skips the value of a key no field has, or gives up if
// encoding/json would match it to one of known.
func (s *Reader) SkipUnknown(depth int, key []byte, known ...string) bool {
	return unknownKey(key, known...) && s.Skip(depth)
}

// Intern interns the short strings the projections repeat (statuses,
// types, roles, ids), so decoding thousands of observations does not allocate
// them anew. Bounded so hostile input cannot grow it.
type Intern map[string]string

const (
	maxIntern    = 4096
	maxInternLen = 64
)

// Get returns b as a string, the same string for the same bytes while the
// table has room.
func (t Intern) Get(b []byte) string {
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

// Text scans a string-typed field: a string sets *dst to its value as
// encoding/json unescapes it, null leaves *dst as it is (as encoding/json
// does); anything else is left to encoding/json.
func (s *Reader) Text(dst *string, intern Intern) bool {
	if s.Null() {
		return true
	}
	_, contents, escaped, ok := s.String()
	if !ok {
		return false
	}
	if !escaped && utf8.Valid(contents) {
		*dst = intern.Get(contents)
		return true
	}
	v, ok := AppendUnquote(nil, contents)
	*dst = string(v)
	return ok
}

// SkipText checks that a string-typed field the caller does not keep holds a
// string or null.
func (s *Reader) SkipText() bool {
	if s.Null() {
		return true
	}
	_, _, _, ok := s.String()
	return ok
}

// Int scans an int-typed field: encoding/json takes only integer tokens
// that fit; null leaves *dst as it is.
func (s *Reader) Int(dst *int) bool {
	if s.Null() {
		return true
	}
	tok, ok := s.Number()
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

// BoolInto scans a bool-typed field; null leaves *dst as it is.
func (s *Reader) BoolInto(dst *bool) bool {
	if s.Null() {
		return true
	}
	v, ok := s.Bool()
	if ok {
		*dst = v
	}
	return ok
}
