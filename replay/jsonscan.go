package replay

// This file adapts internal/jsonscan, the one JSON scanner, to the lean
// decoders (lean.go): typed reads of the fields they keep, with encoding/json's
// rules for null and for keys. Wherever encoding/json's result is not obvious
// (a key that is escaped or not ASCII, a repeated key, a number that is not
// a plain integer) the lean decoder gives up and the caller decodes with
// encoding/json instead, so results never differ.

import (
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// scanner walks one JSON text for a lean decoder. Every method returns false
// when the input is not what the lean decoder can decode exactly (invalid
// JSON included); the caller then falls back to encoding/json.
type scanner struct{ jsonscan.Scanner }

func newScanner(b []byte) scanner { return scanner{jsonscan.NewScanner(b)} }

// object scans an object found at nesting depth, calling field for each key
// with the scanner before the value; field must consume the value. Keys that
// need unescaping or are not ASCII are left to encoding/json, which matches
// them to fields by Unicode case folding.
func (s *scanner) object(depth int, field func(key []byte) bool) bool {
	return s.Object(depth, func(key []byte, plain bool) bool { return plain && field(key) })
}

// rawInto scans any value found at nesting depth into *dst, as a
// json.RawMessage field gets it (null included, as the text "null").
func (s *scanner) rawInto(dst *[]byte, depth int) bool {
	v, ok := s.Raw(depth)
	*dst = v
	return ok
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
	return unknownKey(key, known...) && s.Skip(depth)
}

// internTable interns the short strings the projections repeat (statuses,
// types, roles, ids), so decoding thousands of observations does not allocate
// them anew. Bounded so hostile input cannot grow it.
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

// text scans a string-typed field: a string sets *dst to its value as
// encoding/json unescapes it, null leaves *dst as it is (as encoding/json
// does); anything else is left to encoding/json.
func (s *scanner) text(dst *string, intern internTable) bool {
	if s.Null() {
		return true
	}
	_, contents, escaped, ok := s.String()
	if !ok {
		return false
	}
	if !escaped && utf8.Valid(contents) {
		*dst = intern.get(contents)
		return true
	}
	v, ok := jsonscan.AppendUnquote(nil, contents)
	*dst = string(v)
	return ok
}

// skipText checks that a string-typed field the caller does not keep holds a
// string or null.
func (s *scanner) skipText() bool {
	if s.Null() {
		return true
	}
	_, _, _, ok := s.String()
	return ok
}

// integer scans an int-typed field: encoding/json takes only integer tokens
// that fit; null leaves *dst as it is.
func (s *scanner) integer(dst *int) bool {
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

// boolean scans a bool-typed field; null leaves *dst as it is.
func (s *scanner) boolean(dst *bool) bool {
	if s.Null() {
		return true
	}
	v, ok := s.Bool()
	if ok {
		*dst = v
	}
	return ok
}
