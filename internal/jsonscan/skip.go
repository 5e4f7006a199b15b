// Package jsonscan is wireproof's one JSON scanner: it skips a value,
// validates a text, walks the keys of an object and unescapes a string,
// accepting exactly what encoding/json accepts (RFC 8259, nesting at most
// MaxDepth deep; like encoding/json it does not check strings for valid
// UTF-8) and unescaping exactly as it does. The bundle reader and writer and
// replay's lean decoders all scan with it; fuzz targets compare it with
// encoding/json.
//
// It is iterative and allocation-free (but for ValidLine of a value nested
// more than 64 deep, which allocates 1.25 KiB): string contents, the bulk
// of recorded payloads, are skipped eight bytes at a time, 32 at a time in
// long strings and with the vectorised bytes.IndexByte once 128 bytes have
// gone by without a quote, backslash or control byte.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// MaxDepth bounds nesting so hostile input cannot exhaust memory or the
// stack. It is encoding/json's limit: MaxDepth nested arrays or objects are
// valid, one more is not.
const MaxDepth = 10000

// Valid reports whether b is one JSON value with optional whitespace around
// it, as json.Valid does.
func Valid(b []byte) bool {
	i := SkipSpace(b, 0)
	if i = skip(b, i, 0, nil); i < 0 {
		return false
	}
	return SkipSpace(b, i) == len(b)
}

// ValidLine reports whether b is one JSON value, as Valid does, with no CR or
// LF anywhere: a value that can be embedded in one line of NDJSON as it is.
// It is one pass: raw control bytes are invalid inside strings anyway, so
// outside them only spaces and tabs are taken for whitespace. It is the
// bundle writer's check of every JSON payload, a scan of its own (see
// validLine).
func ValidLine(b []byte) bool { return validLine(b) }

// IsSpace reports whether c is JSON whitespace.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// space is SkipSpace for the common case of no whitespace at b[i], decided
// without a call: every byte of whitespace is at most ' '.
func space(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i
	}
	return SkipSpace(b, i)
}

// Skip scans the JSON value that starts at b[i] (no whitespace before it) and
// returns the index just after it, or -1 if there is no valid value there.
// depth is the nesting the value is found at, so the value itself may nest
// MaxDepth-depth levels. What follows the value is not looked at.
func Skip(b []byte, i, depth int) int { return skip(b, i, depth, nil) }

// SkipMemo is Skip with m: an object or array that m holds, met at a depth
// no deeper than where m's copy was validated, is taken by a memcmp instead
// of scanned (the JSON grammar makes a container end at its own closing
// bracket, so equal bytes are the same valid value). A scan that took none
// may leave the largest container inside the value (4 KiB to 4 MiB) in m for
// the next. Long recordings repeat large values (a poll answered with the
// same projection); elsewhere m costs a comparison per container and a copy
// on ever fewer misses (the 1st, 2nd, 4th, 8th... in a row).
func SkipMemo(b []byte, i, depth int, m *Memo) int { return skip(b, i, depth, m) }

// Memo is the value SkipMemo remembers. The zero value is empty and ready.
type Memo struct {
	raw    []byte // a container validated at depth
	depth  int
	misses uint // scans in a row that met a large container and took none
}

// memoLevels is how many levels below the scanned value are looked at for a
// container to remember.
const memoLevels = 8

// minMemo is the smallest container worth remembering (a variable for the
// tests, which fuzz with small ones); maxMemo the largest, so a memo never
// holds more than a few MiB whatever the values scanned.
var minMemo = 4 << 10

const maxMemo = 4 << 20

// skip is the scan of Skip, SkipMemo and Valid. It is written for compact JSON, whose tokens are mostly
// short strings: keys and values share one string scan, inline while the
// string ends within sixteen bytes (two eight-byte words) and StringEnd's
// otherwise; an integer's digits are counted eight at a time; whitespace is
// looked for only at bytes no greater than ' '.
func skip(b []byte, i, depth int, m *Memo) int {
	if depth > MaxDepth {
		return -1
	}
	var objects [MaxDepth/64 + 1]uint64 // bit d set: level d is an object
	base := depth
	inObject := false // the innermost open container is an object
	isKey := false    // the string at b[i] is an object's key
	// With a memo: where the open containers of the first levels below the
	// value started, the largest one closed so far, and whether m was used.
	var starts [memoLevels]int
	candStart, candEnd, candDepth := 0, 0, 0
	hit := false
	for {
		// A value, or a key when isKey, starts at b[i].
		if i >= len(b) {
			return -1
		}
		c := b[i]
		if c == '"' {
			i++
			end := -1
			if len(b)-i >= 16 {
				x := binary.LittleEndian.Uint64(b[i:])
				if q := quoteMask(x); q != 0 {
					if escMask(x)&(q&-q-1) == 0 {
						end = i + bits.TrailingZeros64(q)>>3 + 1
					}
				} else if escMask(x) == 0 {
					i += 8 // plain content
					x = binary.LittleEndian.Uint64(b[i:])
					if q, e := quoteMask(x), escMask(x); q != 0 && e&(q&-q-1) == 0 {
						end = i + bits.TrailingZeros64(q)>>3 + 1
					} else if q|e == 0 {
						i += 8
					}
				}
			}
			if end < 0 {
				// b[i] is the first byte not known to be plain content.
				if end, _ = StringEnd(b, i); end < 0 {
					return -1
				}
			}
			i = end
			if isKey {
				isKey = false
				if i >= len(b) || b[i] != ':' {
					if i = SkipSpace(b, i); i >= len(b) || b[i] != ':' {
						return -1
					}
				}
				i = space(b, i+1)
				continue
			}
		} else if isKey {
			return -1
		} else {
			switch c {
			case '{', '[':
				if m != nil {
					if n := len(m.raw); n > 0 && depth <= m.depth && len(b)-i >= n && b[i] == m.raw[0] && string(b[i:i+n]) == string(m.raw) {
						i += n
						hit = true
						break
					}
					if l := depth - base; l < memoLevels {
						starts[l] = i
					}
				}
				if depth >= MaxDepth {
					return -1
				}
				i = space(b, i+1)
				if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
					i++
					break
				}
				inObject = c == '{'
				if inObject {
					objects[depth>>6] |= 1 << (depth & 63)
				} else {
					objects[depth>>6] &^= 1 << (depth & 63)
				}
				depth++
				isKey = inObject
				continue
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
				// An integer of up to eight digits, most numbers, is
				// counted in one word; NumberEnd takes the rest.
				if c-'1' < 9 && len(b)-i >= 9 {
					if d := nonDigits(binary.LittleEndian.Uint64(b[i+1:])); d != 0 {
						if j := i + 1 + bits.TrailingZeros64(d)>>3; b[j] != '.' && b[j]|0x20 != 'e' {
							i = j
							break
						}
					}
				}
				if i = NumberEnd(b, i); i < 0 {
					return -1
				}
			}
		}
		// A value ended just before b[i]: close containers until one goes on.
		for {
			if depth == base {
				if m != nil {
					m.remember(b[candStart:candEnd], candDepth, hit)
				}
				return i
			}
			if i >= len(b) || b[i] <= ' ' {
				if i = SkipSpace(b, i); i >= len(b) {
					return -1
				}
			}
			c := b[i]
			i++
			if c == ',' {
				i = space(b, i)
				isKey = inObject
				break
			}
			if c != '}' || !inObject {
				if c != ']' || inObject {
					return -1
				}
			}
			depth--
			inObject = depth > base && objects[(depth-1)>>6]&(1<<((depth-1)&63)) != 0
			if l := depth - base; m != nil && l > 0 && l < memoLevels && i-starts[l] > candEnd-candStart && i-starts[l] <= maxMemo {
				candStart, candEnd, candDepth = starts[l], i, depth
			}
		}
	}
}

// Bytes returns the value m holds, if any.
func (m *Memo) Bytes() []byte { return m.raw }

// remember ends a scan with a memo: cand is the largest container closed
// below the scanned value, validated at depth.
func (m *Memo) remember(cand []byte, depth int, hit bool) {
	if hit {
		m.misses = 0
		return
	}
	if len(cand) < minMemo {
		return
	}
	m.misses++
	if m.misses&(m.misses-1) == 0 {
		m.raw, m.depth = append(m.raw[:0], cand...), depth
	}
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
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

// quoteMask flags the quotes of x as stopMask does (the lowest flag exact).
func quoteMask(x uint64) uint64 {
	q := x ^ (ones * '"')
	return (q - ones) &^ q & highs
}

// escMask flags the backslashes and control bytes of x as stopMask does: no
// flag below a byte means none of the bytes below it is one.
func escMask(x uint64) uint64 {
	s := x ^ (ones * '\\')
	return ((s - ones) &^ s & highs) | ((x - ones*0x20) &^ x & highs)
}

// StringEnd scans the contents of a string whose opening quote is at b[i-1]
// and returns the index after its closing quote, or -1 if it is not a valid
// JSON string; escaped reports whether it holds a backslash escape.
func StringEnd(b []byte, i int) (end int, escaped bool) {
	for words := 0; ; {
	scan:
		for {
			if words == 2 {
				// Not a short string: hand the rest to IndexByte.
				return longStringEnd(b, i, escaped)
			}
			if len(b)-i < 8 {
				for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
					i++
				}
				if i >= len(b) {
					return -1, false
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
		var done bool
		if i, done = takeStop(b, i); done {
			return i, escaped && i >= 0
		}
		escaped = true
	}
}

// takeStop takes the stop byte at b[i] inside a string (see stopMask): at
// the closing quote it returns the index after it and done; at a backslash
// the index after the escape, done only if the escape is invalid (and the
// index -1); at a control byte -1 and done.
func takeStop(b []byte, i int) (next int, done bool) {
	switch b[i] {
	case '"':
		return i + 1, true
	case '\\':
		next = skipEscape(b, i)
		return next, next < 0
	}
	return -1, true
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

// longStringEnd finishes a string from b[i] as StringEnd does, for long
// strings: after each escape the next 128 bytes are searched for a stop
// byte 32 at a time, and past them, for a run long enough that it beats the
// word scan, the closing quote and any backslash are found with
// bytes.IndexByte (vectorised) and the span between checked for control
// bytes 32 at a time. Each byte is searched at most once by the word scan,
// once for a quote and once for a backslash, so hostile input stays linear.
func longStringEnd(b []byte, i int, escaped bool) (int, bool) {
	q := -1 // the first quote at or after i, once known
	for {
		// Text with an escape every few dozen bytes (a model's request, a
		// source file) is searched 32 bytes at a time with stopMask first:
		// two calls of IndexByte and one of hasControl for each escape cost
		// more than the bytes between. After 128 bytes with no stop byte
		// the vectorised search takes the rest.
		if i <= len(b)-32 {
			stop := -1
			for k := 0; k < 4 && i <= len(b)-32; k++ {
				m0, m1 := stopMask(load64(b, i)), stopMask(load64(b, i+8))
				m2, m3 := stopMask(load64(b, i+16)), stopMask(load64(b, i+24))
				if m0|m1|m2|m3 != 0 {
					switch {
					case m0 != 0:
						stop = i + tz(m0)
					case m1 != 0:
						stop = i + 8 + tz(m1)
					case m2 != 0:
						stop = i + 16 + tz(m2)
					default:
						stop = i + 24 + tz(m3)
					}
					break
				}
				i += 32
			}
			if stop >= 0 {
				var done bool
				if i, done = takeStop(b, stop); done {
					return i, escaped && i >= 0
				}
				escaped = true
				continue
			}
		}
		if q < i {
			if q = bytes.IndexByte(b[i:], '"'); q < 0 {
				return -1, false
			}
			q += i
		}
		end := q
		if bs := bytes.IndexByte(b[i:q], '\\'); bs >= 0 {
			end = i + bs
		}
		if hasControl(b[i:end]) {
			return -1, false
		}
		if end == q {
			return q + 1, escaped
		}
		escaped = true
		if i = skipEscape(b, end); i < 0 {
			return -1, false
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

// NumberEnd scans a JSON number at b[i] and returns the index after it, or -1.
func NumberEnd(b []byte, i int) int {
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

// nonDigits flags, in the high bit of each byte of x, the bytes that are not
// ASCII digits. As in stopMask only the lowest flag is exact (a byte of 0xba
// or more carries into the next), which is the only one used.
func nonDigits(x uint64) uint64 {
	above := x + ones*(0x80-'9'-1)  // high bit set above '9' (or carried)
	below := (x | highs) - ones*'0' // high bit clear below '0'
	return (above | ^below | x) & highs
}

// ASCII reports whether every byte of b is below 0x80.
func ASCII(b []byte) bool {
	var acc uint64
	for len(b) >= 8 {
		acc |= binary.LittleEndian.Uint64(b)
		b = b[8:]
	}
	for _, c := range b {
		acc |= uint64(c)
	}
	return acc&highs == 0
}
