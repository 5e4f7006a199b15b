package playback

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzPattern: every recorded string matches its own pattern, and unifies
// with itself.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{
		"", "plain", "thread 0f8fad5b-d9cb-469f-a165-70867728950e done",
		"curl http://127.0.0.1:41234/0f8fad5b-d9cb-469f-a165-70867728950e at 2026-11-30T16:17:38.5Z",
		"Bearer [REDACTED]", "a[REDACTED]b[REDACTED]", "line\nbreak [::1]:80 $^.*(",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p := patternOf(s); p != nil && !p.re.MatchString(s) {
			t.Fatalf("%q does not match its own pattern %s", s, p.re)
		}
		if b := newIDMap().begin(); !b.unifyString(s, s, true) || !b.unifyString(s, s, false) {
			t.Fatalf("%q does not unify with itself", s)
		}
	})
}

// FuzzReplaceTopLevel: the id is replaced in a JSON object and the result
// stays valid JSON; anything else comes back unchanged.
func FuzzReplaceTopLevel(f *testing.F) {
	for _, s := range []string{`{"_tag":"Exit","requestId":"3","exit":{"requestId":1}}`, `{"id":1}`, `[1]`, `{`, `{"a" : 1 , "requestId" :  7 }`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := replaceTopLevel(raw, "requestId", []byte(`"42"`))
		if bytes.Equal(out, raw) {
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("invalid %q changed to %q", raw, out)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil || string(m["requestId"]) != `"42"` {
			t.Fatalf("%q -> %q: requestId %s, %v", raw, out, m["requestId"], err)
		}
	})
}

// FuzzSplitFrame: ndjson lines never hold a newline, and what is not split
// comes back whole.
func FuzzSplitFrame(f *testing.F) {
	for _, s := range []string{"{\"a\":1}\n{\"b\":2}\n", "{\"a\"", "[1,2,{}]", "[", "\n\n"} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, ndjson bool) {
		var buf []byte
		parts := splitFrame(data, ndjson, &buf)
		for _, p := range parts {
			if ndjson && bytes.ContainsAny(p, "\n") {
				t.Fatalf("ndjson line %q holds a newline", p)
			}
		}
		if !ndjson && len(parts) == 1 && !bytes.Equal(parts[0], data) && !json.Valid(bytes.TrimSpace(data)) {
			t.Fatalf("frame %q came back as %q", data, parts[0])
		}
	})
}

// FuzzDecodeJSON: decodeJSON's one-pass decoder gives what encoding/json
// gives, for every text: the same value, or the same refusal.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range decodeJSONCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := decodeJSON(b)
		want, wantOK := decodeJSONStd(b)
		if ok != wantOK || !reflect.DeepEqual(v, want) {
			t.Fatalf("decodeJSON(%q) = %#v, %v; encoding/json: %#v, %v", b, v, ok, want, wantOK)
		}
	})
}
