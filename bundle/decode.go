package bundle

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// DecodeEvent decodes one bundle line (without its newline) into ev, replacing
// all of ev's fields. ev.Body.Data and ev.Attrs are fresh copies, so ev may be
// kept after line is reused. Unknown keys are skipped, so a format 1 reader
// reads lines from a newer writer that only added keys.
func DecodeEvent(line []byte, ev *Event) error {
	var d lineDecoder
	if err := d.decode(line, ev); err != nil {
		return err
	}
	ev.Detach()
	return nil
}

// Detach copies ev.Body.Data and ev.Attrs into memory of their own, so ev stays
// valid after the Reader that returned it moves on.
func (e *Event) Detach() {
	if e.Body.Data != nil {
		e.Body.Data = append(make([]byte, 0, len(e.Body.Data)), e.Body.Data...)
	}
	if e.Attrs != nil {
		e.Attrs = append(make(json.RawMessage, 0, len(e.Attrs)), e.Attrs...)
	}
}

// lineDecoder parses bundle lines without reflection. It keeps a buffer for
// payloads that need unescaping or base64 decoding, and interns the short,
// repetitive strings (kind, conn, dir, type, name, method) so a replay of a
// large bundle does not allocate a string per event for them.
type lineDecoder struct {
	buf     []byte            // decoded payload of the last line
	scratch []byte            // unescaped strings
	intern  map[string]string // bounded by maxInterned
	// skipBody, when set, is asked per kind whether to leave Body empty.
	skipBody func(Kind) bool
}

const maxInterned = 4096

var payloadKeys = map[string]Encoding{"json": EncodingJSON, "text": EncodingText, "b64": EncodingB64}

// errSyntax is wrapped with the position into a decoding error.
var errSyntax = errors.New("not a valid bundle line")

type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("%v: %s at byte %d", errSyntax, e.msg, e.off)
}
func (e *syntaxError) Unwrap() error { return errSyntax }

// decode fills ev from line. Body.Data and Attrs may alias line or d.buf.
func (d *lineDecoder) decode(line []byte, ev *Event) error {
	*ev = Event{}
	p := parser{b: line}
	p.ws()
	if !p.consume('{') {
		return p.fail("want '{'")
	}
	var haveSeq, haveT, haveKind, havePayload bool
	var bodyKey Encoding
	var bodyRaw []byte // the raw value of the payload key
	p.ws()
	if p.consume('}') {
		return p.fail("empty object")
	}
	for {
		p.ws()
		key, ok := p.str(&d.scratch)
		if !ok {
			return p.fail("want a key")
		}
		p.ws()
		if !p.consume(':') {
			return p.fail("want ':'")
		}
		switch string(key) {
		case "seq":
			p.ws()
			n, ok := p.uint()
			if !ok {
				return p.fail("seq is not an unsigned integer")
			}
			ev.Seq, haveSeq = n, true
		case "t":
			n, ok := p.int()
			if !ok {
				return p.fail("t is not an integer")
			}
			ev.T, haveT = n, true
		case "kind":
			s, ok := d.internStr(&p)
			if !ok {
				return p.fail("kind is not a string")
			}
			ev.Kind, haveKind = Kind(s), true
		case "conn":
			if ev.Conn, ok = d.internStr(&p); !ok {
				return p.fail("conn is not a string")
			}
		case "dir":
			s, ok := d.internStr(&p)
			if !ok {
				return p.fail("dir is not a string")
			}
			ev.Dir = Dir(s)
		case "type":
			if ev.Type, ok = d.internStr(&p); !ok {
				return p.fail("type is not a string")
			}
		case "name":
			if ev.Name, ok = d.internStr(&p); !ok {
				return p.fail("name is not a string")
			}
		case "method":
			if ev.Method, ok = d.internStr(&p); !ok {
				return p.fail("method is not a string")
			}
		case "url":
			if ev.URL, ok = p.strAlloc(&d.scratch); !ok {
				return p.fail("url is not a string")
			}
		case "reason":
			if ev.Reason, ok = p.strAlloc(&d.scratch); !ok {
				return p.fail("reason is not a string")
			}
		case "err":
			if ev.Err, ok = p.strAlloc(&d.scratch); !ok {
				return p.fail("err is not a string")
			}
		case "status":
			n, ok := p.int()
			if !ok || n != int64(int(n)) {
				return p.fail("status is not an integer")
			}
			ev.Status = int(n)
		case "code":
			n, ok := p.int()
			if !ok || n != int64(int(n)) {
				return p.fail("code is not an integer")
			}
			ev.Code = int(n)
		case "size":
			if ev.Size, ok = p.int(); !ok {
				return p.fail("size is not an integer")
			}
		case "truncated":
			if ev.Truncated, ok = p.bool(); !ok {
				return p.fail("truncated is not a boolean")
			}
		case "binary":
			if ev.Body.Binary, ok = p.bool(); !ok {
				return p.fail("binary is not a boolean")
			}
		case "header":
			h, ok := p.header(&d.scratch)
			if !ok {
				return p.fail("header is not an object of string arrays")
			}
			if len(h) > 0 {
				ev.Header = h // an empty header is no header, as the writer sees it
			}
		case "attrs":
			p.ws()
			start := p.i
			if !p.skip(0) {
				return p.fail("attrs is not a JSON value")
			}
			ev.Attrs = json.RawMessage(p.b[start:p.i:p.i])
			if bytes.ContainsAny(ev.Attrs, "\r\n") {
				return p.fail("attrs contain a line break")
			}
		case "json", "text", "b64":
			if havePayload {
				return p.fail("more than one payload key")
			}
			havePayload = true
			bodyKey = payloadKeys[string(key)] // no allocation, unlike Encoding(key)
			// The json payload is everything between ':' and the next
			// delimiter, whitespace included, so it comes back byte-exact.
			start := p.i
			p.ws()
			if !p.skip(0) {
				return p.fail(string(bodyKey) + " payload is not a JSON value")
			}
			p.ws()
			bodyRaw = p.b[start:p.i:p.i]
		default:
			p.ws()
			if !p.skip(0) {
				return p.fail("bad value")
			}
		}
		p.ws()
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			break
		}
		return p.fail("want ',' or '}'")
	}
	p.ws()
	if p.i != len(p.b) {
		return p.fail("data after the object")
	}
	switch {
	case !haveSeq:
		return &syntaxError{0, "missing seq"}
	case !haveT:
		return &syntaxError{0, "missing t"}
	case !haveKind:
		return &syntaxError{0, "missing kind"}
	}
	if !havePayload || d.skips(ev.Kind) {
		return nil
	}
	return d.payload(ev, bodyKey, bodyRaw)
}

// skips reports whether the payload of an event of kind k is left undecoded.
// The header and trailer are always decoded: the Reader checks them.
func (d *lineDecoder) skips(k Kind) bool {
	return d.skipBody != nil && k != KindHeader && k != KindTrailer && d.skipBody(k)
}

// payload decodes the raw value of the payload key into ev.Body.Data.
func (d *lineDecoder) payload(ev *Event, enc Encoding, raw []byte) error {
	switch enc {
	case EncodingJSON:
		ev.Body.Data = raw
		return nil
	case EncodingText:
		q := parser{b: trimSpace(raw)}
		s, ok := q.str(&d.buf)
		if !ok || q.i != len(q.b) {
			return &syntaxError{0, "text payload is not a JSON string"}
		}
		if s == nil {
			s = raw[:0] // an empty string is an empty, not absent, payload
		}
		ev.Body.Data = s
		return nil
	case EncodingB64:
		q := parser{b: trimSpace(raw)}
		s, ok := q.str(&d.scratch)
		if !ok || q.i != len(q.b) {
			return &syntaxError{0, "b64 payload is not a JSON string"}
		}
		n := base64.StdEncoding.DecodedLen(len(s))
		if cap(d.buf) < n {
			d.buf = make([]byte, n)
		}
		m, err := base64.StdEncoding.Decode(d.buf[:n], s)
		if err != nil {
			return &syntaxError{0, "b64 payload is not standard base64: " + err.Error()}
		}
		ev.Body.Data = d.buf[:m:m]
		if ev.Body.Data == nil {
			ev.Body.Data = []byte{} // present but empty, as written
		}
		return nil
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// internStr reads a string value and returns a shared copy of it.
func (d *lineDecoder) internStr(p *parser) (string, bool) {
	p.ws()
	b, ok := p.str(&d.scratch)
	if !ok {
		return "", false
	}
	if len(b) == 0 {
		return "", true
	}
	if s, ok := d.intern[string(b)]; ok {
		return s, true
	}
	s := string(b)
	if d.intern == nil {
		d.intern = make(map[string]string)
	}
	if len(d.intern) < maxInterned {
		d.intern[s] = s
	}
	return s, true
}

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
