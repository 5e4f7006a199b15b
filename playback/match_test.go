package playback

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// decodeJSONCases are texts decodeJSON must decide as encoding/json does:
// escapes, surrogates, invalid UTF-8, numbers, repeated keys, what follows
// the value, nesting.
var decodeJSONCases = []string{
	`{"_tag":"Request","id":"3","tag":"echo","payload":{"threadId":"t-1","n":[1,2.5,-3e2,0]},"headers":[]}`,
	`{"a":"line\nbreak \"quoted\" \u00e9 \ud83d\ude00 \ud800 \/"}`,
	"{\"\xff\":\"\xc3\x28\"}",
	`{"a":1,"a":2}`,
	`{"a":1} `, `{"a":1}}`, `{"a":1}]`, `{"a":1} x`, `1 2`, `[1,]`, `{"a":01}`, `-`, `1.`, `1e`, `"\x01"`,
	`[]`, `{}`, `null`, `true`, `false`, `"é"`, ` [ {"k" : [ null , true ] } ] `, ``, ` `, `{`, `"`,
	`{"\u0061":1}`, `"\u12"`, `"\q"`,
	strings.Repeat("[", 1100) + strings.Repeat("]", 1100),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// TestDecodeJSON: the one-pass decoder and encoding/json agree on every
// case, and a valid text is decoded by it (the fast path is taken).
func TestDecodeJSON(t *testing.T) {
	for _, c := range decodeJSONCases {
		v, ok := decodeJSON([]byte(c))
		want, wantOK := decodeJSONStd([]byte(c))
		if ok != wantOK {
			t.Errorf("decodeJSON(%.60q) ok %v, encoding/json %v", c, ok, wantOK)
			continue
		}
		if !reflect.DeepEqual(v, want) { // cmp.Diff takes minutes on the deep cases
			t.Errorf("decodeJSON(%.60q) = %.200v, encoding/json %.200v", c, v, want)
		}
	}
	s := jsonscan.NewScanner([]byte(`{"payload":{"n":[1,2.5],"s":"a\nb"}}`))
	v, ok := decodeFast(&s, 0)
	want := map[string]any{"payload": map[string]any{"n": []any{json.Number("1"), json.Number("2.5")}, "s": "a\nb"}}
	if !ok || !s.End() {
		t.Fatalf("decodeFast did not decode a valid text")
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("decodeFast (-want +got):\n%s", diff)
	}
}
