package bundle

// This file is the JSON scanner under the line decoder: strict (RFC 8259),
// allocation-free except where a string needs unescaping, and bounded in depth.

import (
	"net/http"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// parser is a minimal, strict JSON scanner over one line.
type parser struct {
	b []byte
	i int
}

func (p *parser) fail(msg string) error { return &syntaxError{p.i, msg} }

func (p *parser) ws() {
	for p.i < len(p.b) && isSpace(p.b[p.i]) {
		p.i++
	}
}

func (p *parser) consume(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) literal(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

func (p *parser) bool() (bool, bool) {
	p.ws()
	switch {
	case p.literal("true"):
		return true, true
	case p.literal("false"):
		return false, true
	}
	return false, false
}

// number scans a JSON number and returns its text.
func (p *parser) number() ([]byte, bool) {
	start := p.i
	p.consume('-')
	switch {
	case p.consume('0'):
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return nil, false
	}
	if p.consume('.') {
		if !p.digits() {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if !p.consume('+') {
			p.consume('-')
		}
		if !p.digits() {
			return nil, false
		}
	}
	return p.b[start:p.i], true
}

func (p *parser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

func (p *parser) uint() (uint64, bool) {
	p.ws()
	b, ok := p.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(unsafeString(b), 10, 64)
	return n, err == nil
}

func (p *parser) int() (int64, bool) {
	p.ws()
	b, ok := p.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(unsafeString(b), 10, 64)
	return n, err == nil
}

// str scans a JSON string. Without escapes it returns a subslice of the line;
// with escapes it unescapes into *scratch (reused) and returns that.
func (p *parser) str(scratch *[]byte) ([]byte, bool) {
	if !p.consume('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i:p.i]
			p.i++
			if !utf8.Valid(s) {
				return nil, false
			}
			return s, true
		case c == '\\':
			return p.strEscaped(start, scratch)
		case c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

func (p *parser) strEscaped(start int, scratch *[]byte) ([]byte, bool) {
	out := append((*scratch)[:0], p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			*scratch = out
			if !utf8.Valid(out) {
				return nil, false
			}
			return out, true
		case c < 0x20:
			return nil, false
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.b) {
			return nil, false
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return nil, false
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				save := p.i
				if p.literal(`\u`) {
					if r2, ok = p.hex4(); !ok {
						return nil, false
					}
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
				} else {
					p.i = save // a lone surrogate, as encoding/json treats it
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, false
		}
	}
	return nil, false
}

func (p *parser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// strAlloc scans a string and returns it as a new Go string.
func (p *parser) strAlloc(scratch *[]byte) (string, bool) {
	p.ws()
	b, ok := p.str(scratch)
	return string(b), ok
}

// header scans an object of string arrays.
func (p *parser) header(scratch *[]byte) (http.Header, bool) {
	p.ws()
	if !p.consume('{') {
		return nil, false
	}
	h := http.Header{}
	p.ws()
	if p.consume('}') {
		return h, true
	}
	for {
		p.ws()
		k, ok := p.str(scratch)
		if !ok {
			return nil, false
		}
		name := string(k)
		p.ws()
		if !p.consume(':') {
			return nil, false
		}
		p.ws()
		if !p.consume('[') {
			return nil, false
		}
		vals := []string{}
		p.ws()
		if !p.consume(']') {
			for {
				v, ok := p.strAlloc(scratch)
				if !ok {
					return nil, false
				}
				vals = append(vals, v)
				p.ws()
				if p.consume(',') {
					continue
				}
				if p.consume(']') {
					break
				}
				return nil, false
			}
		}
		h[name] = vals
		p.ws()
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			return h, true
		}
		return nil, false
	}
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack. It is
// encoding/json's limit, so payloadEncoding agrees with json.Valid.
const maxDepth = 10000

// skip scans one JSON value, validating it, and leaves p after it.
func (p *parser) skip(depth int) bool {
	p.ws()
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; c {
	case '{':
		if depth >= maxDepth {
			return false
		}
		p.i++
		p.ws()
		if p.consume('}') {
			return true
		}
		for {
			p.ws()
			if !p.skipString() {
				return false
			}
			p.ws()
			if !p.consume(':') || !p.skip(depth+1) {
				return false
			}
			p.ws()
			if p.consume(',') {
				continue
			}
			return p.consume('}')
		}
	case '[':
		if depth >= maxDepth {
			return false
		}
		p.i++
		p.ws()
		if p.consume(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			p.ws()
			if p.consume(',') {
				continue
			}
			return p.consume(']')
		}
	case '"':
		return p.skipString()
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	default:
		_, ok := p.number()
		return ok
	}
}

// skipString scans a string without unescaping it.
func (p *parser) skipString() bool {
	if !p.consume('"') {
		return false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			ok := utf8.Valid(p.b[start:p.i])
			p.i++
			return ok
		case c < 0x20:
			return false
		case c == '\\':
			p.i++
			if p.i >= len(p.b) {
				return false
			}
			switch p.b[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				p.i++
				if _, ok := p.hex4(); !ok {
					return false
				}
			default:
				return false
			}
			continue
		}
		p.i++
	}
	return false
}

// unsafeString views b as a string without copying; b must not change while
// the string is in use.
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
