package playback

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// value is a request part decoded for matching: a JSON value (as
// encoding/json decodes into any, numbers kept as json.Number), url.Values
// for a form, or a string for any other text.
type value = any

// decodeJSON decodes b, or reports that it is not one JSON value: what
// encoding/json's Decoder (UseNumber) decodes into an any. The client's
// every request and RPC payload is decoded for matching, so a text that is
// one valid JSON value is decoded in one pass (decodeFast); anything else
// is left to encoding/json, which decides it as it always did.
func decodeJSON(b []byte) (any, bool) {
	s := jsonscan.NewScanner(b)
	if v, ok := decodeFast(&s, 0); ok && s.End() {
		return v, true
	}
	return decodeJSONStd(b)
}

// maxFastDepth is the nesting decodeFast goes to; deeper texts are left to
// encoding/json (whose limit is 10,000).
const maxFastDepth = 1000

// decodeFast decodes the value at s as encoding/json decodes it into an
// any with UseNumber: objects as map[string]any (a repeated key's last
// value), arrays as []any, numbers as json.Number, strings unquoted as
// encoding/json does (jsonscan.AppendUnquote). It returns false where the
// text is not valid JSON, or nests deeper than maxFastDepth.
func decodeFast(s *jsonscan.Scanner, depth int) (any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	switch s.Peek() {
	case '{':
		m := map[string]any{}
		ok := s.Object(depth, func(key []byte, plain bool) bool {
			k, ok := unquote(key, plain)
			if !ok {
				return false
			}
			v, ok := decodeFast(s, depth+1)
			m[k] = v
			return ok
		})
		return m, ok
	case '[':
		a := []any{}
		ok := s.Array(depth, func() bool {
			v, ok := decodeFast(s, depth+1)
			a = append(a, v)
			return ok
		})
		return a, ok
	case '"':
		_, contents, escaped, ok := s.String()
		if !ok {
			return nil, false
		}
		return unquote(contents, !escaped && utf8.Valid(contents))
	case 't', 'f':
		v, ok := s.Bool()
		return v, ok
	case 'n':
		return nil, s.Null()
	}
	tok, ok := s.Number()
	return json.Number(tok), ok
}

// unquote is a JSON string's value from its contents; plain says they are
// it as they are.
func unquote(contents []byte, plain bool) (string, bool) {
	if plain {
		return string(contents), true
	}
	v, ok := jsonscan.AppendUnquote(nil, contents)
	return string(v), ok
}

// decodeJSONStd is decodeJSON by encoding/json.
func decodeJSONStd(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if dec.More() {
		return nil, false
	}
	return v, true
}

// decodeBody turns a request body into a value compared semantically: JSON
// when it parses as JSON, a form when the content type says so, else text.
func decodeBody(b []byte, contentType string) value {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if v, ok := decodeJSON(b); ok {
		return v
	}
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/x-www-form-urlencoded" {
		if q, err := url.ParseQuery(string(b)); err == nil {
			return formValue(q)
		}
	}
	return string(b)
}

// formValue is a form or query as a JSON-like object of string arrays, so
// it unifies like JSON.
func formValue(q url.Values) map[string]any {
	m := make(map[string]any, len(q))
	for k, vs := range q {
		a := make([]any, len(vs))
		for i, v := range vs {
			a[i] = v
		}
		m[k] = a
	}
	return m
}

// equalScalar compares two JSON scalars: numbers by value, others exactly.
func equalScalar(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok || bok {
		if !aok || !bok {
			return false
		}
		if an == bn {
			return true
		}
		af, err1 := an.Float64()
		bf, err2 := bn.Float64()
		return err1 == nil && err2 == nil && af == bf
	}
	return a == b
}

// pathSegments splits a URL path for matching; segments are compared as
// strings, so an id in the path unifies like one in a body.
func pathSegments(p string) []any {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	out := make([]any, len(parts))
	for i, s := range parts {
		out[i] = s
	}
	return out
}

// request is an HTTP request or a WebSocket upgrade as matching sees it.
type request struct {
	Method string
	Path   []any
	Query  map[string]any
	Body   value
}

func newRequest(method string, u *url.URL, body []byte, contentType string) request {
	q, _ := url.ParseQuery(u.RawQuery)
	return request{Method: method, Path: pathSegments(u.Path), Query: formValue(q), Body: decodeBody(body, contentType)}
}

// unifyRequest reports whether live matches rec, binding ids. Credentials
// and other headers are not compared: the bundle holds them redacted.
func (b *binding) unifyRequest(rec, live *request) bool {
	if rec.Method != live.Method {
		return false
	}
	if !b.unify(rec.Path, live.Path, "") {
		return false
	}
	if !b.unify(rec.Query, live.Query, "") {
		return false
	}
	if (rec.Body == nil) != (live.Body == nil) {
		return false
	}
	return rec.Body == nil || b.unify(rec.Body, live.Body, "")
}
