// Package wsframe reads and writes WebSocket frame headers (RFC 6455 section
// 5.2) incrementally, for a relay that passes frames on byte for byte and only
// looks inside them to record what they carry.
package wsframe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// Opcode is a frame's opcode.
type Opcode byte

// The opcodes of RFC 6455.
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

// IsControl reports whether op is a control opcode (close, ping, pong and the
// reserved 0xB-0xF).
func (op Opcode) IsControl() bool { return op&0x8 != 0 }

func (op Opcode) String() string {
	switch op {
	case OpContinuation:
		return "continuation"
	case OpText:
		return "text"
	case OpBinary:
		return "binary"
	case OpClose:
		return "close"
	case OpPing:
		return "ping"
	case OpPong:
		return "pong"
	}
	return fmt.Sprintf("opcode 0x%x", byte(op))
}

// MaxHeader is the longest a frame header can be.
const MaxHeader = 14

// MaxControlPayload is the largest payload a control frame may carry.
const MaxControlPayload = 125

// Header is a parsed frame header.
type Header struct {
	Fin    bool
	RSV1   bool // set on the first frame of a permessage-deflate compressed message
	RSV2   bool
	RSV3   bool
	Op     Opcode
	Masked bool
	Mask   [4]byte
	Length int64 // payload length
}

// ErrShort means more bytes are needed to parse the header.
var ErrShort = errors.New("wsframe: short header")

// Parse parses the header at the start of b and returns it with its length in
// bytes. It returns ErrShort if b does not hold the whole header yet, and an
// error for a header RFC 6455 does not allow: a payload length with its most
// significant bit set, a length not in its shortest form, or a control frame
// that is fragmented or longer than MaxControlPayload.
func Parse(b []byte) (Header, int, error) {
	if len(b) < 2 {
		return Header{}, 0, ErrShort
	}
	h := Header{
		Fin:    b[0]&0x80 != 0,
		RSV1:   b[0]&0x40 != 0,
		RSV2:   b[0]&0x20 != 0,
		RSV3:   b[0]&0x10 != 0,
		Op:     Opcode(b[0] & 0x0f),
		Masked: b[1]&0x80 != 0,
	}
	n := 2
	switch l := b[1] & 0x7f; l {
	case 126:
		if len(b) < n+2 {
			return Header{}, 0, ErrShort
		}
		h.Length = int64(binary.BigEndian.Uint16(b[n:]))
		n += 2
		if h.Length < 126 {
			return Header{}, 0, fmt.Errorf("wsframe: payload length %d not in its shortest form", h.Length)
		}
	case 127:
		if len(b) < n+8 {
			return Header{}, 0, ErrShort
		}
		u := binary.BigEndian.Uint64(b[n:])
		n += 8
		if u>>63 != 0 {
			return Header{}, 0, errors.New("wsframe: payload length with its most significant bit set")
		}
		if u <= 0xffff {
			return Header{}, 0, fmt.Errorf("wsframe: payload length %d not in its shortest form", u)
		}
		h.Length = int64(u)
	default:
		h.Length = int64(l)
	}
	if h.Masked {
		if len(b) < n+4 {
			return Header{}, 0, ErrShort
		}
		copy(h.Mask[:], b[n:])
		n += 4
	}
	if h.Op.IsControl() {
		if !h.Fin {
			return Header{}, 0, fmt.Errorf("wsframe: fragmented %v frame", h.Op)
		}
		if h.Length > MaxControlPayload {
			return Header{}, 0, fmt.Errorf("wsframe: %v frame of %d bytes (at most %d)", h.Op, h.Length, MaxControlPayload)
		}
	}
	return h, n, nil
}

// Append appends the encoding of h to b.
func Append(b []byte, h Header) []byte {
	b0 := byte(h.Op & 0x0f)
	if h.Fin {
		b0 |= 0x80
	}
	if h.RSV1 {
		b0 |= 0x40
	}
	if h.RSV2 {
		b0 |= 0x20
	}
	if h.RSV3 {
		b0 |= 0x10
	}
	var m byte
	if h.Masked {
		m = 0x80
	}
	switch {
	case h.Length < 126:
		b = append(b, b0, m|byte(h.Length))
	case h.Length <= 0xffff:
		b = append(b, b0, m|126)
		b = binary.BigEndian.AppendUint16(b, uint16(h.Length))
	default:
		b = append(b, b0, m|127)
		b = binary.BigEndian.AppendUint64(b, uint64(h.Length))
	}
	if h.Masked {
		b = append(b, h.Mask[:]...)
	}
	return b
}

// Mask XORs b with key, as if b started pos bytes into a frame's payload, and
// returns the position after b. Masking and unmasking are the same operation.
func Mask(b []byte, key [4]byte, pos int64) int64 {
	return MaskCopy(b, b, key, pos)
}

// MaskCopy writes src XORed with key to dst, as if src started pos bytes
// into a frame's payload, and returns the position after src: a copy and
// an unmasking in one pass over the bytes. dst must be at least as long as
// src; dst and src may be the same slice (Mask) but must not otherwise
// overlap.
func MaskCopy(dst, src []byte, key [4]byte, pos int64) int64 {
	dst = dst[:len(src)]
	k := binary.LittleEndian.Uint32(key[:])
	k = bits.RotateLeft32(k, -8*int(pos&3))
	k64 := uint64(k) | uint64(k)<<32
	i := 0
	// 32 bytes a round: four 8-byte words loaded, XORed and stored, with the
	// bounds checked once per round.
	for ; len(src)-i >= 32; i += 32 {
		s, d := src[i:i+32:i+32], dst[i:i+32:i+32]
		w0 := binary.LittleEndian.Uint64(s[0:])
		w1 := binary.LittleEndian.Uint64(s[8:])
		w2 := binary.LittleEndian.Uint64(s[16:])
		w3 := binary.LittleEndian.Uint64(s[24:])
		binary.LittleEndian.PutUint64(d[0:], w0^k64)
		binary.LittleEndian.PutUint64(d[8:], w1^k64)
		binary.LittleEndian.PutUint64(d[16:], w2^k64)
		binary.LittleEndian.PutUint64(d[24:], w3^k64)
	}
	for ; len(src)-i >= 8; i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(src[i:])^k64)
	}
	for ; i < len(src); i++ {
		dst[i] = src[i] ^ byte(k)
		k = bits.RotateLeft32(k, -8)
	}
	return pos + int64(len(src))
}

// CloseNoStatus is the code a close frame without a payload stands for
// (1005). It is never sent on the wire.
const CloseNoStatus = 1005

// ParseClose returns the code and reason of a close frame's (unmasked)
// payload: CloseNoStatus and "" for an empty one. It returns an error for a
// payload of one byte or a reason that is not UTF-8; the code and whatever
// reason there is are returned with it.
func ParseClose(p []byte) (code int, reason string, err error) {
	switch len(p) {
	case 0:
		return CloseNoStatus, "", nil
	case 1:
		return 0, "", errors.New("wsframe: close payload of one byte")
	}
	code, reason = int(binary.BigEndian.Uint16(p)), string(p[2:])
	if !utf8.ValidString(reason) {
		return code, reason, errors.New("wsframe: close reason is not UTF-8")
	}
	return code, reason, nil
}

// AppendClose appends a close frame payload for code and reason to b.
func AppendClose(b []byte, code int, reason string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(code))
	return append(b, reason...)
}
