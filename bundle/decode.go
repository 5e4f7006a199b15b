package bundle

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// DecodeEvent decodes one bundle line (without its newline) into ev, replacing
// all of ev's fields. ev.Body.Data and ev.Attrs are fresh copies, so ev may be
// kept after line is reused. Unknown keys are skipped, so a format 1 reader
// reads lines from a newer writer that only added keys.
func DecodeEvent(line []byte, ev *Event) error {
	d := lineDecoder{oneLine: true}
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
	// memo holds a large part of a payload scanned before: a long
	// recording repeats them (polls answered with the same projection).
	memo    jsonscan.Memo
	oneLine bool     // no line follows to use memo
	unknown []string // the unknown keys of the line being decoded
	// skipBody, when set, is asked per kind whether to leave Body empty.
	skipBody func(Kind) bool
}

// The intern table is bounded in entries and entry length, so hostile input
// cannot grow it beyond a few hundred KiB.
const (
	maxInterned    = 4096
	maxInternedLen = 64
)

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
	p := newParser(line)
	if !p.Consume('{') {
		return p.fail("want '{'")
	}
	var haveSeq, haveT, haveKind, havePayload bool
	var bodyKey Encoding
	var bodyRaw []byte // the raw value of the payload key
	if p.Consume('}') {
		return p.fail("empty object")
	}
	var seen uint32 // the envelope keys met, by envelopeKeys
	d.unknown = d.unknown[:0]
	for {
		keyStart := p.Pos()
		key, ok := p.str(&d.scratch)
		if !ok {
			return p.fail("want a key")
		}
		// A key twice is an error, as it is for every reader alike: JSON
		// tools disagree on which value wins (jq the last).
		if bit := envelopeKey(key); bit != 0 {
			if seen&bit != 0 {
				return &syntaxError{keyStart, fmt.Sprintf("duplicate key %q", key)}
			}
			seen |= bit
		} else {
			for _, k := range d.unknown {
				if k == string(key) {
					return &syntaxError{keyStart, fmt.Sprintf("duplicate key %q", key)}
				}
			}
			d.unknown = append(d.unknown, string(key))
		}
		if !p.Consume(':') {
			return p.fail("want ':'")
		}
		switch string(key) {
		case "seq":
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
			if ev.Truncated, ok = p.Bool(); !ok {
				return p.fail("truncated is not a boolean")
			}
		case "binary":
			if ev.Body.Binary, ok = p.Bool(); !ok {
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
			p.Space()
			start := p.Pos()
			if !p.skipValue(nil) {
				return p.fail("attrs is not a JSON value")
			}
			ev.Attrs = json.RawMessage(p.Since(start))
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
			start := p.Pos()
			memo := &d.memo
			if d.oneLine {
				memo = nil
			}
			if !p.skipValue(memo) {
				return p.fail(string(bodyKey) + " payload is not a JSON value")
			}
			p.Space()
			bodyRaw = p.Since(start)
		default:
			if !p.skipValue(nil) {
				return p.fail("bad value")
			}
		}
		if p.Consume(',') {
			continue
		}
		if p.Consume('}') {
			break
		}
		return p.fail("want ',' or '}'")
	}
	if !p.End() {
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
	if !havePayload {
		return nil
	}
	if d.skips(ev.Kind) {
		if bodyKey != EncodingB64 {
			return nil // a json or text payload was checked by skipValue
		}
		// Undecoded, a b64 payload is still checked, so a bad one is the
		// same error for every reader whatever it skips.
		err := d.payload(ev, bodyKey, bodyRaw)
		ev.Body.Data = nil
		return err
	}
	return d.payload(ev, bodyKey, bodyRaw)
}

// envelopeKey gives each envelope key its bit, to find one met twice; 0 for
// a key the envelope does not have. A switch, not a map: it runs for every
// key of every line.
func envelopeKey(key []byte) uint32 {
	switch string(key) {
	case "seq":
		return 1 << 0
	case "t":
		return 1 << 1
	case "kind":
		return 1 << 2
	case "conn":
		return 1 << 3
	case "dir":
		return 1 << 4
	case "type":
		return 1 << 5
	case "name":
		return 1 << 6
	case "method":
		return 1 << 7
	case "url":
		return 1 << 8
	case "reason":
		return 1 << 9
	case "err":
		return 1 << 10
	case "status":
		return 1 << 11
	case "code":
		return 1 << 12
	case "size":
		return 1 << 13
	case "truncated":
		return 1 << 14
	case "binary":
		return 1 << 15
	case "header":
		return 1 << 16
	case "attrs":
		return 1 << 17
	case "json":
		return 1 << 18
	case "text":
		return 1 << 19
	case "b64":
		return 1 << 20
	}
	return 0
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
		q := newParser(raw)
		s, ok := q.str(&d.buf)
		if !ok || !q.End() {
			return &syntaxError{0, "text payload is not a JSON string"}
		}
		if s == nil {
			s = raw[:0] // an empty string is an empty, not absent, payload
		}
		ev.Body.Data = s
		return nil
	case EncodingB64:
		q := newParser(raw)
		s, ok := q.str(&d.scratch)
		if !ok || !q.End() {
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

// internStr reads a string value and returns a shared copy of it.
func (d *lineDecoder) internStr(p *parser) (string, bool) {
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
	if len(d.intern) < maxInterned && len(s) <= maxInternedLen {
		d.intern[s] = s
	}
	return s, true
}
