package bundle

import (
	"unicode/utf8"
)

// This file is the reader's scan of payload values, the bulk of every line.
// It accepts exactly what (*parser).skip accepts (strict JSON, strings of
// valid UTF-8, nesting at most maxDepth deep) and stops at the same byte, but
// is iterative, skips string contents eight bytes at a time and checks UTF-8
// once over the whole value: outside strings a valid value is ASCII, so the
// value is valid UTF-8 exactly when each of its strings is.

// skipValue scans one JSON value, validating it, and leaves p after it.
func (p *parser) skipValue() bool {
	p.ws()
	start := p.i
	end := scanValue(p.b, p.i)
	if end < 0 || !utf8.Valid(p.b[start:end]) {
		return false
	}
	p.i = end
	return true
}

// scanValue scans the JSON value at b[i] and returns the index after it, or
// -1. String contents are not checked for UTF-8.
func scanValue(b []byte, i int) int {
	var objects [maxDepth/64 + 1]uint64 // bit d set: level d is an object
	depth := 0
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; c {
		case '{', '[':
			if depth >= maxDepth {
				return -1
			}
			i = skipSpace(b, i+1)
			if c == '{' {
				objects[depth/64] |= 1 << (depth % 64)
				depth++
				if i < len(b) && b[i] == '}' {
					depth--
					i++
					break
				}
				if i = scanKey(b, i); i < 0 {
					return -1
				}
				continue
			}
			objects[depth/64] &^= 1 << (depth % 64)
			depth++
			if i < len(b) && b[i] == ']' {
				depth--
				i++
				break
			}
			continue
		case '"':
			if i = skipStringBody(b, i+1); i < 0 {
				return -1
			}
		case 't':
			if !hasLiteral(b, i, "true") {
				return -1
			}
			i += 4
		case 'f':
			if !hasLiteral(b, i, "false") {
				return -1
			}
			i += 5
		case 'n':
			if !hasLiteral(b, i, "null") {
				return -1
			}
			i += 4
		default:
			q := parser{b: b, i: i}
			if _, ok := q.number(); !ok {
				return -1
			}
			i = q.i
		}
		// A value ended just before b[i]: close containers until one goes on.
		for {
			if depth == 0 {
				return i
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return -1
			}
			inObject := objects[(depth-1)/64]&(1<<((depth-1)%64)) != 0
			c := b[i]
			i++
			if c == ',' {
				i = skipSpace(b, i)
				if inObject {
					if i = scanKey(b, i); i < 0 {
						return -1
					}
				}
				break
			}
			if (inObject && c == '}') || (!inObject && c == ']') {
				depth--
				continue
			}
			return -1
		}
	}
}

// skipSpace skips JSON whitespace, as (*parser).ws does.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanKey scans `"key" :` and the whitespace after it, returning the index of
// the value, or -1.
func scanKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = skipStringBody(b, i+1); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}
