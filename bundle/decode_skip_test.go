package bundle

import (
	"strings"
	"testing"
)

// skipSeeds are payload values and near misses for the payload scan.
var skipSeeds = []string{
	`{"_tag":"Exit","requestId":"7","exit":{"_tag":"Success","value":{"runs":[{"id":"run-1","ordinal":1}],"text":"` + strings.Repeat("x", 40) + `"}}}`,
	`[1, -2.5e+3, 0, true, false, null, "a\"b\\c\u00e9\ud83d\ude00", {}, [], { "k" : [ ] } ]`,
	`"café"`, "\"a\xffb\"", "\"a\x01b\"", `"\x"`, `"\u12"`, `"abc`, `01`, `-`, `1.`, `1e`, `tru`, `nul`, `{"a":1,}`, `[1,]`,
	`{"a" 1}`, `{1:2}`, `[1 2]`, `{"a":1} trailing`, ` 	 {"a":1}`, "[\r1\r]", `}`, `,`, ``, `"` + strings.Repeat("é", 9) + `"`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
}

// sameSkip checks that skipValue accepts what skip accepts and stops at the
// same byte.
func sameSkip(t *testing.T, input string) {
	t.Helper()
	ref := parser{b: []byte(input)}
	refOK := ref.skip(0)
	got := parser{b: []byte(input)}
	gotOK := got.skipValue()
	if gotOK != refOK || gotOK && got.i != ref.i {
		t.Errorf("skipValue(%.80q) = %v at %d, skip = %v at %d", input, gotOK, got.i, refOK, ref.i)
	}
}

func TestSkipValueMatchesSkip(t *testing.T) {
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
