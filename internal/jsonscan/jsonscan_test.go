package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// seeds are valid values and near misses, for the tables and the fuzzers.
var seeds = []string{
	`{"_tag":"Exit","requestId":"7","exit":{"_tag":"Success","value":{"runs":[{"id":"run-1","ordinal":1}],"text":"` + strings.Repeat("x", 40) + `"}}}`,
	`[1, -2.5e+3, 0, true, false, null, "a\"b\\c\u00e9\ud83d\ude00", {}, [], { "k" : [ ] } ]`,
	`"café"`, "\"a\xffb\"", "\"a\x01b\"", `"\x"`, `"\u12"`, `"abc`, `01`, `-`, `1.`, `1e`, `1e+`, `-0.0e-0`, `tru`, `nul`, `falsey`,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `{1:2}`, `[1 2]`, `{"a":1} trailing`, ` 	 {"a":1}`, "[\r1\r]", "\n[\n]\n", `}`, `,`, ``, ` `,
	`"` + strings.Repeat("é", 9) + `"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"\ud83d\ude00x"`, `"\/\b\f\n\r\t"`, `"\'"`,
	`"` + strings.Repeat("abcdefgh", 9) + `\n` + strings.Repeat("z", 40) + "\x1f" + `"`,
	`"` + strings.Repeat("abcdefgh", 9) + `\u00e9` + strings.Repeat("z", 40) + `"`,
	"[1\r,2]", "{\"a\":1,\n\"b\":2}", `[12345678,123456789,1234567.5,12e3,7,-0,0]`, `{"k":12345678}`, `[1x]`, `[0123]`,
	`{"id":"thr_0123456789","t":"a thread","n":12}`, `{"abcdefghijklmno":"abcdefghijklmnop","q":"abcdefg\"h"}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

func TestValid(t *testing.T) {
	for _, s := range seeds {
		sameValid(t, []byte(s))
	}
	// Every special byte at every offset around the eight-byte stride and
	// the switch to the long-string scan.
	for _, special := range []string{`"`, `\n`, `\u00e9`, `\q`, "\x01", "\x1f", "\n", "\r", "é", "\xff", " ", `\`} {
		for n := 0; n < 40; n++ {
			sameValid(t, []byte(`["`+strings.Repeat("a", n)+special+`b"]`))
			sameValid(t, []byte(`{"`+strings.Repeat("a", n)+special+`b":1}`))
			sameSkip(t, []byte(`"`+strings.Repeat("a", n)+special+`b" `))
		}
	}
}

// sameValid checks Valid against json.Valid.
func sameValid(t *testing.T, b []byte) {
	t.Helper()
	if got, want := Valid(b), json.Valid(b); got != want {
		t.Errorf("Valid(%.80q) = %v, json.Valid = %v", b, got, want)
	}
	line := json.Valid(b) && !bytes.ContainsAny(b, "\r\n")
	if got := ValidLine(b); got != line {
		t.Errorf("ValidLine(%.80q) = %v, want %v (json.Valid and no CR or LF)", b, got, line)
	}
}

// sameSkip checks that Skip ends where json.Decoder's token ends, and fails
// where the Decoder cannot read a value.
func sameSkip(t *testing.T, b []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	err := dec.Decode(&raw)
	want := -1
	if err == nil {
		want = int(dec.InputOffset())
	}
	if got := Skip(b, SkipSpace(b, 0), 0); got != want {
		t.Errorf("Skip(%.80q) = %d, json.Decoder ends at %d (%v)", b, got, want, err)
	}
}

// sameString checks that String and AppendUnquote read a string token as
// json.Unmarshal does.
func sameString(t *testing.T, b []byte) {
	t.Helper()
	var want string
	wantErr := json.Unmarshal(b, &want)
	s := NewScanner(b)
	tok, contents, escaped, ok := s.String()
	ok = ok && s.End()
	if ok != (wantErr == nil) {
		if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' || ok {
			t.Errorf("String(%.80q) ok = %v, json.Unmarshal: %v", b, ok, wantErr)
		}
		return
	}
	if !ok {
		return
	}
	got, uok := AppendUnquote(nil, contents)
	if !uok || string(got) != want {
		t.Errorf("AppendUnquote(%.80q) = %q, %v; json.Unmarshal = %q", tok, got, uok, want)
	}
	if !escaped && utf8.Valid(contents) && string(contents) != want {
		t.Errorf("String(%.80q) says unescaped, but the value is %q", tok, want)
	}
}

func TestString(t *testing.T) {
	for _, s := range seeds {
		sameString(t, []byte(s))
	}
	for _, s := range []string{`"plain ascii"`, `"tab\there"`, "\"raw\ttab\"", `"a\u0000b"`, `"\u00"`, `"\uZZZZ"`, `"\ud83d\ude00\ud83d"`, `"\ud83d\\"`, "\"\xed\xa0\x80\"", "\"\xf0\x9f\x98\x80\""} {
		sameString(t, []byte(s))
	}
}

func TestSkipDepth(t *testing.T) {
	deep := []byte(strings.Repeat("[", 10) + strings.Repeat("]", 10))
	for _, tc := range []struct {
		depth, want int
	}{{0, len(deep)}, {MaxDepth - 10, len(deep)}, {MaxDepth - 9, -1}, {MaxDepth + 1, -1}} {
		if got := Skip(deep, 0, tc.depth); got != tc.want {
			t.Errorf("Skip of 10 levels at depth %d = %d, want %d", tc.depth, got, tc.want)
		}
	}
	// A value found inside another stops at its own end.
	b := []byte(`[{"a":[1,2]},3]`)
	if got := Skip(b, 1, 1); got != len(`[{"a":[1,2]}`) {
		t.Errorf("Skip of the inner object = %d", got)
	}
}

func TestScannerObject(t *testing.T) {
	s := NewScanner([]byte(` {"id": "a\u00e9", "n": [1, 2, {"x": null}], "ok": true, "caf\u00e9": 1} `))
	var keys []string
	var plains []bool
	ok := s.Object(0, func(key []byte, plain bool) bool {
		keys, plains = append(keys, string(key)), append(plains, plain)
		return s.Skip(1)
	})
	if !ok || !s.End() {
		t.Fatalf("Object failed at %d", s.Pos())
	}
	if got := strings.Join(keys, ","); got != `id,n,ok,caf\u00e9` {
		t.Errorf("keys %s", got)
	}
	if plains[0] != true || plains[3] != false {
		t.Errorf("plain %v", plains)
	}
	bad := NewScanner([]byte(`{"a":1 "b":2}`))
	if bad.Object(0, func([]byte, bool) bool { return bad.Skip(1) }) {
		t.Error("Object accepted a missing comma")
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range append(seeds, lineShapes()...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameValid(t, b)
		sameSkip(t, b)
		sameString(t, b)
	})
}

func ExampleScanner() {
	s := NewScanner([]byte(`{"_tag":"Exit","requestId":"7","exit":{"_tag":"Success","value":{"big":"..."}}}`))
	var id string
	ok := s.Object(0, func(key []byte, plain bool) bool {
		if string(key) == "requestId" {
			_, contents, escaped, ok := s.String()
			id = string(contents)
			return ok && !escaped
		}
		return s.Skip(1) // validated, not decoded
	})
	fmt.Println(id, ok && s.End())
	// Output: 7 true
}

// TestValidLineShapes: the paths of ValidLine's own scan, each beside its
// near misses: the `":"` and `,"` shortcuts and the same bytes with space
// around them, strings that end at, before and after the sixteen-byte
// inline scan with an escape or a control byte at each place, nesting on
// both sides of the 64 levels held in a register, with the wrong bracket
// closing at each depth, and literals and numbers cut short.
func TestValidLineShapes(t *testing.T) {
	for _, c := range lineShapes() {
		sameValid(t, []byte(c))
	}
}

// lineShapes are TestValidLineShapes's cases, seeds for FuzzValid too.
func lineShapes() []string {
	var cases []string
	for _, sep := range []string{`":"`, `": "`, `" :"`, "\":\t\"", `","`, `", "`, `" ,"`, `":1,"`, `":[],"`, `":{},"`, `"::"`, `",,"`, `":"":"`} {
		cases = append(cases, `{"a`+sep+`b"}`, `["a`+sep+`b"]`, `{"a`+sep+`b`+sep+`c"}`, `[{"a`+sep+`b"},"c`+sep+`d"]`)
	}
	cases = append(cases, `[{"a":1},{"b":"c"},{}]`, `[{"a":1},{]`, `[{"a":1},{"b"}]`, `{"a":1,{"b":2}}`, `{"a":"x",{"b":2}}`, `[1,{"a":1},{"b":[{},{}]}]`, `[{},{} ]`, `[{}, {}]`, `[{},{`, `[[],{"a":"b","c":"d"},"e","f"]`)
	for n := 12; n <= 20; n++ {
		s := strings.Repeat("k", n)
		for _, special := range []string{"", `\"`, `\\`, `\u0041`, `\u004`, "\x00", "\t", `"`} {
			for at := 0; at <= n; at += 3 {
				v := s[:at] + special + s[at:]
				cases = append(cases, `{"`+v+`":"`+v+`"}`, `["`+v+`","`+v+`"]`, `{"`+v+`":1}`, `"`+v)
			}
		}
	}
	for _, depth := range []int{62, 63, 64, 65, 66, 127, 128, 129} {
		var open, shut string
		for d := 0; d < depth; d++ {
			if d%3 == 0 {
				open, shut = open+`{"k":`, "}"+shut
			} else {
				open, shut = open+"[", "]"+shut
			}
		}
		cases = append(cases, open+"1"+shut, open+`"s"`+shut, open+"[]"+shut, open+"{}"+shut, open+shut, open+"1"+shut+shut, open+"1"+shut[1:])
		for _, cut := range []int{1, 2, 3, depth - 64, depth - 63, depth - 2} {
			if cut > 0 && cut < len(shut) {
				swapped := []byte(shut)
				if swapped[cut] == '}' {
					swapped[cut] = ']'
				} else {
					swapped[cut] = '}'
				}
				cases = append(cases, open+"1"+string(swapped), open+`"x",2`+shut)
			}
		}
	}
	for _, v := range []string{"true", "false", "null", "tru", "fals", "nul", "truex", "nulll", "-0", "-01", "1e+5", "1E-5", "1.5e", "01", "123456789", "12345678.5", "12345678e1", "12345678", "-", "0.", ".5", "+1", "1e+", "2.e3"} {
		cases = append(cases, v, "["+v+"]", `{"k":`+v+`}`, `{"k":`+v+`,"l":`+v+`}`, "["+v+","+v+"]", " "+v+"\t", v+"\r", "\n"+v)
	}
	return cases
}
