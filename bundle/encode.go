package bundle

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendEvent appends the bundle line of ev to dst, without the trailing
// newline, and returns the extended slice.
//
// The encoder is written by hand rather than with encoding/json because
// json.Marshal compacts and HTML-escapes a json.RawMessage, which would change
// payload bytes; here a "json" payload is copied verbatim. Keys come in a fixed
// order (seq, t, kind, then the envelope fields in declaration order, the
// payload, size, truncated, err) and empty fields are left out, so equal events
// encode to equal bytes. AppendEvent does not allocate beyond growing dst,
// except to sort the keys of a non-empty Header.
//
// Attrs must be one JSON value without line breaks (Writer.Append checks
// this); anything else is written as a JSON string so the line stays valid.
// String fields that are not valid UTF-8 have each bad byte replaced by U+FFFD,
// as encoding/json does; only the payload is byte-exact for every input.
func AppendEvent(dst []byte, ev *Event) []byte {
	dst = appendLineHead(dst, ev.Seq, ev.T)
	return appendEventTail(dst, ev)
}

// appendLineHead appends the start of a line, `{"seq":N,"t":T`: the only part
// that depends on the event's place in the bundle.
func appendLineHead(dst []byte, seq uint64, t int64) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, `,"t":`...)
	return strconv.AppendInt(dst, t, 10)
}

// appendEventTail appends the rest of the line, from `,"kind":` to the closing
// brace. It does not depend on Seq or T, so it can be encoded before the event
// takes its place (see Encode).
func appendEventTail(dst []byte, ev *Event) []byte {
	dst = appendEventHead(dst, ev)
	dst = appendPayload(dst, ev.Body)
	return appendEventEnd(dst, ev)
}

// appendEventHead appends the fields of the tail before the payload.
func appendEventHead(dst []byte, ev *Event) []byte {
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, string(ev.Kind))
	dst = appendField(dst, `,"conn":`, ev.Conn)
	dst = appendField(dst, `,"dir":`, string(ev.Dir))
	dst = appendField(dst, `,"type":`, ev.Type)
	dst = appendField(dst, `,"name":`, ev.Name)
	dst = appendField(dst, `,"method":`, ev.Method)
	dst = appendField(dst, `,"url":`, ev.URL)
	dst = appendInt(dst, `,"status":`, int64(ev.Status))
	dst = appendInt(dst, `,"code":`, int64(ev.Code))
	dst = appendField(dst, `,"reason":`, ev.Reason)
	if len(ev.Header) > 0 {
		dst = appendHeader(dst, ev)
	}
	if len(ev.Attrs) > 0 {
		dst = append(dst, `,"attrs":`...)
		if embeddableJSON(ev.Attrs) {
			dst = append(dst, ev.Attrs...)
		} else {
			dst = appendString(dst, string(ev.Attrs))
		}
	}
	return dst
}

// appendEventEnd appends the fields of the tail after the payload.
func appendEventEnd(dst []byte, ev *Event) []byte {
	dst = appendInt(dst, `,"size":`, ev.Size)
	if ev.Truncated {
		dst = append(dst, `,"truncated":true`...)
	}
	dst = appendField(dst, `,"err":`, ev.Err)
	return append(dst, '}')
}

// appendPayload writes p under the key its Encoding names, and the "binary"
// flag when p.Binary is set. The flag is separate from the key because bytes
// that are not valid UTF-8 are base64-encoded even when they arrived as text,
// and a reader must restore Binary exactly.
func appendPayload(dst []byte, p Payload) []byte {
	return appendPayloadAs(dst, p, payloadEncoding(p))
}

// appendPayloadAs is appendPayload for p's encoding, enc, decided already.
func appendPayloadAs(dst []byte, p Payload, enc Encoding) []byte {
	switch enc {
	case EncodingJSON:
		dst = append(dst, `,"json":`...)
		dst = append(dst, p.Data...)
	case EncodingText:
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, unsafeString(p.Data))
	case EncodingB64:
		dst = append(dst, `,"b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, p.Data)
		dst = append(dst, '"')
	}
	return appendBinaryFlag(dst, p)
}

func appendBinaryFlag(dst []byte, p Payload) []byte {
	if p.Binary {
		dst = append(dst, `,"binary":true`...)
	}
	return dst
}

func appendField(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	dst = append(dst, key...)
	return appendString(dst, s)
}

func appendInt(dst []byte, key string, n int64) []byte {
	if n == 0 {
		return dst
	}
	dst = append(dst, key...)
	return strconv.AppendInt(dst, n, 10)
}

// appendHeader writes the header with its names sorted so the line is
// deterministic. A name with no values is written as an empty array.
func appendHeader(dst []byte, ev *Event) []byte {
	names := make([]string, 0, len(ev.Header))
	for k := range ev.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	dst = append(dst, `,"header":{`...)
	for i, k := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ":["...)
		for j, v := range ev.Header[k] {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, v)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// escapeASCII marks the ASCII bytes that need escaping inside a JSON string.
var escapeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Only '"', '\\' and control bytes
// are escaped, so valid UTF-8 text comes back byte for byte; each byte of an
// invalid UTF-8 sequence becomes U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if !escapeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// payloadEncoding is Payload.Encoding without encoding/json: json.Valid was
// three quarters of the cost of appending a 1 KiB JSON message. It must agree
// with Payload.Encoding for every input (FuzzPayloadEncoding checks).
func payloadEncoding(p Payload) Encoding {
	switch {
	case p.Data == nil:
		return EncodingNone
	case p.Binary:
		return EncodingB64
	case jsonLineMemo(p.Data): // valid UTF-8 too: a repeated payload is one comparison
		return EncodingJSON
	case !utf8.Valid(p.Data):
		return EncodingB64
	}
	return EncodingText
}

// validAttrs reports whether a can be written verbatim as the attrs value.
func validAttrs(a json.RawMessage) bool {
	return len(a) == 0 || embeddableJSON(a)
}
