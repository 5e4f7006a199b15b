package bundle

// This file is the line decoder's view of internal/jsonscan, the one JSON
// scanner: strict (RFC 8259), allocation-free except where a string needs
// unescaping, bounded in depth, and stricter than encoding/json in one way:
// a bundle line is UTF-8, so a string that is not is an error.

import (
	"net/http"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// parser scans one line.
type parser struct{ jsonscan.Scanner }

func newParser(b []byte) parser { return parser{jsonscan.NewScanner(b)} }

func (p *parser) fail(msg string) error { return &syntaxError{p.Pos(), msg} }

func (p *parser) uint() (uint64, bool) {
	b, ok := p.Number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(unsafeString(b), 10, 64)
	return n, err == nil
}

func (p *parser) int() (int64, bool) {
	b, ok := p.Number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(unsafeString(b), 10, 64)
	return n, err == nil
}

// str scans a string of valid UTF-8. Without escapes it returns a subslice
// of the line; with escapes it unescapes into *scratch (reused) and returns
// that.
func (p *parser) str(scratch *[]byte) ([]byte, bool) {
	_, s, escaped, ok := p.String()
	if !ok || !utf8.Valid(s) {
		return nil, false
	}
	if !escaped {
		return s, true
	}
	out, ok := jsonscan.AppendUnquote((*scratch)[:0], s)
	*scratch = out
	return out, ok
}

// strAlloc scans a string and returns it as a new Go string.
func (p *parser) strAlloc(scratch *[]byte) (string, bool) {
	b, ok := p.str(scratch)
	return string(b), ok
}

// skipValue scans one JSON value of valid UTF-8, validating it, and leaves p
// after it. m, if not nil, is the memo of large values met before (see
// jsonscan.SkipMemo).
func (p *parser) skipValue(m *jsonscan.Memo) bool {
	p.Space()
	start := p.Pos()
	return p.SkipMemo(0, m) && utf8.Valid(p.Since(start))
}

// header scans an object of string arrays.
func (p *parser) header(scratch *[]byte) (http.Header, bool) {
	if !p.Consume('{') {
		return nil, false
	}
	h := http.Header{}
	if p.Consume('}') {
		return h, true
	}
	for {
		k, ok := p.str(scratch)
		if !ok || !p.Consume(':') || !p.Consume('[') {
			return nil, false
		}
		name := string(k)
		vals := []string{}
		if !p.Consume(']') {
			for {
				v, ok := p.strAlloc(scratch)
				if !ok {
					return nil, false
				}
				vals = append(vals, v)
				if p.Consume(',') {
					continue
				}
				if p.Consume(']') {
					break
				}
				return nil, false
			}
		}
		h[name] = vals
		if p.Consume(',') {
			continue
		}
		if p.Consume('}') {
			return h, true
		}
		return nil, false
	}
}

// unsafeString views b as a string without copying; b must not change while
// the string is in use.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
