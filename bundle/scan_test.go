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
	gotOK := got.skipValue()
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
