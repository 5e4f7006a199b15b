package playback

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/url"
	"strings"
)

// value is a request part decoded for matching: a JSON value (as
// encoding/json decodes into any, numbers kept as json.Number), url.Values
// for a form, or a string for any other text.
type value = any

// decodeJSON decodes b, or reports that it is not one JSON value.
func decodeJSON(b []byte) (any, bool) {
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
