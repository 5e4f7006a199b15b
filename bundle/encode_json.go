package bundle

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// This file is the writer's JSON validity check. It runs once per payload on
// the recording's hot path (a 20 KiB HTTP body costs the recursive parser of
// scan.go about 40 µs, more than compressing and hashing it together), so it
// is iterative, skips string contents eight bytes at a time and answers only
// yes or no.

// validJSONLine reports whether b is exactly one JSON value (RFC 8259, nesting
// at most maxDepth deep, as encoding/json accepts) with no CR or LF anywhere.
// b must already be valid UTF-8: string contents are not checked for it.
//
// Treating CR and LF as invalid whitespace folds the "may it be embedded in a
// line" test into the same pass: outside strings they could only be
// whitespace, and inside strings raw control bytes are invalid anyway.
func validJSONLine(b []byte) bool {
	var objects [maxDepth/64 + 1]uint64 // bit d set: level d is an object
	depth := uint(0)
	i := skipBlank(b, 0)
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{', '[':
			if depth >= maxDepth {
				return false
			}
			i = skipBlank(b, i+1)
			if c == '{' {
				objects[depth>>6] |= 1 << (depth & 63)
				depth++
				if i < len(b) && b[i] == '}' {
					depth--
					i++
					break
				}
				if i = skipKey(b, i); i < 0 {
					return false
				}
				continue
			}
			objects[depth>>6] &^= 1 << (depth & 63)
			depth++
			if i < len(b) && b[i] == ']' {
				depth--
				i++
				break
			}
			continue
		case '"':
			if i = skipStringBody(b, i+1); i < 0 {
				return false
			}
		case 't':
			if !hasLiteral(b, i, "true") {
				return false
			}
			i += 4
		case 'f':
			if !hasLiteral(b, i, "false") {
				return false
			}
			i += 5
		case 'n':
			if !hasLiteral(b, i, "null") {
				return false
			}
			i += 4
		default:
			if i = skipNumber(b, i); i < 0 {
				return false
			}
		}
		// A value ended just before b[i]: close containers until one goes on.
		for {
			i = skipBlank(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			inObject := objects[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
			c := b[i]
			i++
			if c == ',' {
				i = skipBlank(b, i)
				if inObject {
					if i = skipKey(b, i); i < 0 {
						return false
					}
				}
				break
			}
			if (inObject && c == '}') || (!inObject && c == ']') {
				depth--
				continue
			}
			return false
		}
	}
}

// skipBlank skips the whitespace a line may hold: spaces and tabs.
func skipBlank(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// skipKey skips `"key" :` and the blanks after it, returning the index of the
// value, or -1.
func skipKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = skipStringBody(b, i+1); i < 0 {
		return -1
	}
	i = skipBlank(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipBlank(b, i+1)
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// stopMask flags, in the high bit of each byte of x, the bytes a string scan
// must look at: '"', '\\' and control bytes. Only the lowest flag is exact
// (a borrow can flag bytes above a true one), which is the only one used.
func stopMask(x uint64) uint64 {
	q := x ^ (ones * '"')
	s := x ^ (ones * '\\')
	return ((q - ones) &^ q & highs) | ((s - ones) &^ s & highs) | ((x - ones*0x20) &^ x & highs)
}

// skipStringBody scans a string whose opening quote is at b[i-1] and returns
// the index after its closing quote, or -1 if it is not a valid JSON string.
func skipStringBody(b []byte, i int) int {
	for words := 0; ; {
	scan:
		for {
			if words == 2 {
				// Not a short string: hand the rest to IndexByte.
				return skipLongString(b, i)
			}
			if len(b)-i < 8 {
				for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
					i++
				}
				if i >= len(b) {
					return -1
				}
				break
			}
			if m := stopMask(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break scan
			}
			i += 8
			words++
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i = skipEscape(b, i); i < 0 {
				return -1
			}
		default: // a control byte
			return -1
		}
	}
}

// skipEscape checks the escape sequence at b[i] (a backslash) and returns the
// index after it, or -1.
func skipEscape(b []byte, i int) int {
	if i+1 >= len(b) {
		return -1
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2
	case 'u':
		if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
			return -1
		}
		return i + 6
	}
	return -1
}

// skipLongString finishes a string from b[i] as skipStringBody does, for
// strings long enough that finding the closing quote and any backslash with
// bytes.IndexByte (vectorised) and checking the span between for control
// bytes 32 at a time beats the eight-byte scan. Each byte is searched at most
// once for a quote and once for a backslash, so hostile input stays linear.
func skipLongString(b []byte, i int) int {
	q := -1 // the first quote at or after i, once known
	for {
		if q < i {
			if q = bytes.IndexByte(b[i:], '"'); q < 0 {
				return -1
			}
			q += i
		}
		end := q
		if bs := bytes.IndexByte(b[i:q], '\\'); bs >= 0 {
			end = i + bs
		}
		if hasControl(b[i:end]) {
			return -1
		}
		if end == q {
			return q + 1
		}
		if i = skipEscape(b, end); i < 0 {
			return -1
		}
	}
}

// hasControl reports whether b holds a byte below 0x20.
func hasControl(b []byte) bool {
	const c = ones * 0x20
	for len(b) >= 32 {
		x0 := binary.LittleEndian.Uint64(b)
		x1 := binary.LittleEndian.Uint64(b[8:])
		x2 := binary.LittleEndian.Uint64(b[16:])
		x3 := binary.LittleEndian.Uint64(b[24:])
		if ((x0-c)&^x0|(x1-c)&^x1|(x2-c)&^x2|(x3-c)&^x3)&highs != 0 {
			return true
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x-c)&^x&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, ch := range b {
		if ch < 0x20 {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipNumber scans a JSON number at b[i] and returns the index after it, or -1.
func skipNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
