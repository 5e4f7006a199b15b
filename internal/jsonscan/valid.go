package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// This file is ValidLine's scan, apart from skip's. The bundle writer runs
// it over every JSON payload it records (a 20 KiB HTTP body, every
// WebSocket message, every streamed chunk), so it is written for that
// alone, without skip's memo, starting depth and choice of whitespace: a
// state machine of gotos with no call on its common path and few live
// values, so that the compiler keeps them in registers instead of reloading
// them from the stack after every token; the nesting of the first 64
// levels in a register rather than a 1.25 KiB array zeroed on every call;
// a string followed straight into the next when the bytes between are the
// `":"` of a key and its string value or the `,"` before the next key; a
// string that does not end within sixteen bytes handed to StringEnd where
// the inline scan stopped. It accepts exactly what Valid accepts, with no
// CR or LF anywhere; the fuzz targets hold both to encoding/json.

// validLine is ValidLine.
func validLine(b []byte) bool {
	n := len(b)
	i := 0
	for i < n && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	var (
		objects  uint64   // bit d set: level d (< 64) is an object
		deep     []uint64 // the same for levels 64 and deeper, once met
		depth    int
		inObject bool // the innermost open container is an object
		isKey    bool // the string scanned is a key
		m        uint64
		j, k     int
		w        []byte
		c        byte
	)

value: // A value starts at b[i].
	if i >= n {
		return false
	}
	c = b[i]
	switch c {
	case '"':
		i++
		goto valueString
	case '{', '[':
		if depth >= MaxDepth {
			return false
		}
		i++
		for i < n && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i < n && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
			i++
			goto after
		}
		inObject = c == '{'
		if depth < 64 {
			if inObject {
				objects |= 1 << depth
			} else {
				objects &^= 1 << depth
			}
		} else {
			deep = pushDeep(deep, depth, inObject)
		}
		depth++
		if inObject {
			goto key
		}
		goto value
	case 't', 'f', 'n':
		lit := "null"
		if c == 't' {
			lit = "true"
		} else if c == 'f' {
			lit = "false"
		}
		if !hasLiteral(b, i, lit) {
			return false
		}
		i += len(lit)
		goto after
	}
	// A number. An integer of up to eight digits, most numbers, is
	// counted in one word; NumberEnd takes the rest.
	if c-'1' < 9 && n-i >= 9 {
		if m = nonDigits(load64(b, i+1)); m != 0 {
			if j = i + 1 + tz(m); b[j] != '.' && b[j]|0x20 != 'e' {
				i = j
				goto after
			}
		}
	}
	if i = NumberEnd(b, i); i < 0 {
		return false
	}
	goto after

key: // A key starts at b[i].
	if i >= n || b[i] != '"' {
		return false
	}
	i++
keyString: // The contents of a key start at b[i].
	isKey = true
	goto contents
colon: // A key ended just before b[i].
	if n-i >= 2 && b[i] == ':' {
		if b[i+1] == '"' {
			i += 2
			goto valueString
		}
		i++
	} else {
		for i < n && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i >= n || b[i] != ':' {
			return false
		}
		i++
	}
	for i < n && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	goto value

valueString: // The contents of a string value start at b[i].
	isKey = false
contents: // The contents of a string start at b[i].
	// Inline while the string ends within sixteen bytes: k is the first
	// stop byte of the two words, 16 if there is none; StringEnd takes the
	// rest from there.
	if n-i >= 16 {
		w = b[i : i+16]
		if m = stopMask(binary.LittleEndian.Uint64(w)); m != 0 {
			k = tz(m)
		} else if m = stopMask(binary.LittleEndian.Uint64(w[8:])); m != 0 {
			k = 8 + tz(m)
		} else {
			k = 16
		}
		if k < 16 && w[k] == '"' {
			i += k + 1
			goto ended
		}
		i += k
	}
	if i, _ = StringEnd(b, i); i < 0 {
		return false
	}
ended:
	if isKey {
		goto colon
	}

after: // A value ended just before b[i].
	if depth == 0 {
		for i < n && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		return i == n
	}
	if i >= n {
		return false
	}
	c = b[i]
	i++
	switch c {
	case ',':
		if inObject {
			if i < n && b[i] == '"' {
				i++
				goto keyString
			}
			for i < n && (b[i] == ' ' || b[i] == '\t') {
				i++
			}
			goto key
		}
		for i < n && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		goto value
	case '}', ']':
		if inObject != (c == '}') {
			return false
		}
		depth--
		if depth > 0 {
			if d := depth - 1; d < 64 {
				inObject = objects&(1<<d) != 0
			} else {
				inObject = deep[d>>6]&(1<<(d&63)) != 0
			}
		}
		goto after
	case ' ', '\t':
		for i < n && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		goto after
	}
	return false
}

// pushDeep records in deep that level d (64 or more) is an object or an
// array, allocating deep on the first such level, and returns it.
func pushDeep(deep []uint64, d int, object bool) []uint64 {
	if deep == nil {
		deep = make([]uint64, MaxDepth/64+1)
	}
	if object {
		deep[d>>6] |= 1 << (d & 63)
	} else {
		deep[d>>6] &^= 1 << (d & 63)
	}
	return deep
}

// load64 is the eight bytes at b[i:] as a little-endian word.
func load64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }

// tz is the index of the lowest flag of m, a non-zero mask of flags in the
// high bits of its bytes: the high bit set tells the compiler m is not zero,
// so it need not guard the instruction against it.
func tz(m uint64) int { return bits.TrailingZeros64(m|1<<63) >> 3 }
