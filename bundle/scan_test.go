package bundle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// skipSeeds are payload values and near misses for the payload scan; the
// JSON grammar itself is fuzzed in internal/jsonscan, so these are about
// what the bundle adds: strings must be valid UTF-8.
var skipSeeds = []string{
	`{"_tag":"Exit","requestId":"7","exit":{"_tag":"Success","value":{"text":"` + strings.Repeat("x", 40) + `"}}}`,
	`"café"`, "\"a\xffb\"", "\"a\xed\xa0\x80b\"", `"\ud800"`, `"` + strings.Repeat("é", 9) + `"`, "{\"k\xc3\":1}", `{"a":1} trailing`, ``,
}

// sameSkip checks that skipValue accepts a value exactly when
// encoding/json's Decoder reads one and it is valid UTF-8 (a bundle line
// must be), and stops where the Decoder does.
func sameSkip(t *testing.T, input string) {
	t.Helper()
	b := []byte(input)
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	refOK := dec.Decode(&raw) == nil && utf8.Valid(raw)
	got := newParser(b)
	gotOK := got.skipValue(nil)
	if gotOK != refOK || gotOK && got.Pos() != int(dec.InputOffset()) {
		t.Errorf("skipValue(%.80q) = %v at %d, json.Decoder = %v at %d", input, gotOK, got.Pos(), refOK, dec.InputOffset())
	}
}

func TestSkipValueMatchesDecoder(t *testing.T) {
	for _, s := range skipSeeds {
		sameSkip(t, s)
	}
	// Every special byte at every offset around the eight-byte stride.
	for _, special := range []string{`"`, `\n`, `\u00e9`, `\q`, "\x01", "é", "\xff", " "} {
		for n := 0; n < 18; n++ {
			sameSkip(t, `["`+strings.Repeat("a", n)+special+`b"]`)
		}
	}
}

func FuzzSkipValue(f *testing.F) {
	for _, s := range skipSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) { sameSkip(t, input) })
}

// TestPayloadMemo: a line decoder takes a large payload part it scanned
// before by a memcmp, and still refuses the same part broken.
func TestPayloadMemo(t *testing.T) {
	value := `{"turnItems":[` + strings.Repeat(`{"type":"x","text":"`+strings.Repeat("y", 500)+`"},`, 20) + `{}]}`
	line := func(seq int, v string) []byte {
		return []byte(`{"seq":` + string(rune('0'+seq)) + `,"t":1,"kind":"ws.message","json":{"_tag":"Exit","requestId":"` + string(rune('0'+seq)) + `","exit":{"value":` + v + `}}}`)
	}
	var d lineDecoder
	var ev Event
	for seq := 1; seq < 4; seq++ {
		if err := d.decode(line(seq, value), &ev); err != nil {
			t.Fatalf("line %d: %v", seq, err)
		}
		if want := `{"_tag":"Exit","requestId":"` + string(rune('0'+seq)) + `","exit":{"value":` + value + `}}`; string(ev.Body.Data) != want {
			t.Fatalf("line %d: payload %.80q", seq, ev.Body.Data)
		}
	}
	if !bytes.Contains(line(3, value), d.memo.Bytes()) || len(d.memo.Bytes()) < len(value) {
		t.Fatalf("memo holds %.60q", d.memo.Bytes())
	}
	for _, broken := range []string{strings.Replace(value, "yyy", "y\x01y", 1), strings.Replace(value, `"},{"type"`, `"},,{"type"`, 1), strings.Replace(value, "yyy", "y\xffy", 1)} {
		if err := d.decode(line(5, broken), &ev); err == nil {
			t.Errorf("a broken repeat was accepted: %.80q", broken)
		}
	}
}
