package bundle

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestValidJSONLine checks the writer's validity check against encoding/json
// on the cases its fast paths treat specially (FuzzPayloadEncoding covers the
// rest).
func TestValidJSONLine(t *testing.T) {
	long := strings.Repeat("abcdefgh", 5)
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"blank", " \t"},
		{"scalar", "12"},
		{"blanks around", "\t [1, 2]\t "},
		{"nested", `{"a":[{"b":{}},[]],"c":null}`},
		{"empty containers", `[{},[],{"a":[]}]`},
		{"long string", `"` + long + `"`},
		{"quote after eight bytes", `"` + long + `\"x"`},
		{"control byte in a long string", `"` + long + "\x01" + long + `"`},
		{"unicode escape", `"` + long + `\u00e9\uD83D\uDE00"`},
		{"bad unicode escape", `"` + long + `\u00g9"`},
		{"bad escape", `"\x"`},
		{"bad escape in a long string", `"` + long + `\x"`},
		{"many escaped quotes", `"` + strings.Repeat(`abcdefghij\"`, 20) + `"`},
		{"escaped backslash before the quote", `["` + long + `\\", 1]`},
		{"long string then more", `{"a":"` + long + `","b":"` + long + "\t" + `"}`},
		{"control byte late in a long string", `"` + long + long + "\x1f" + `"`},
		{"unterminated string", `"` + long},
		{"trailing comma", `{"a":1,}`},
		{"missing colon", `{"a" 1}`},
		{"mismatched close", `[1}`},
		{"two values", `1 2`},
		{"numbers", `[-0,0.5,1e9,-1.5E-3,1E+2]`},
		{"bad numbers", `[01]`},
		{"bare minus", `-`},
		{"dot without digits", `1.`},
		{"exponent without digits", `1e+`},
		{"literals", `[true,false,null]`},
		{"short literal", `tru`},
		{"non-ascii", `{"é":"日本"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := validJSONLine([]byte(tc.in)), json.Valid([]byte(tc.in)); got != want {
				t.Errorf("validJSONLine(%q) = %v, json.Valid = %v", tc.in, got, want)
			}
		})
	}
	for _, s := range []string{"[1,\n2]", "{\"a\":\r1}", "\"a\nb\""} {
		if validJSONLine([]byte(s)) {
			t.Errorf("validJSONLine(%q) = true, want false: a line break cannot be embedded", s)
		}
	}
}

// BenchmarkPayloadEncodingMessage measures the check on a 1 KiB WebSocket
// message that is mostly one long string, as streamed deltas are.
func BenchmarkPayloadEncodingMessage(b *testing.B) {
	msg := []byte(`{"_tag":"Chunk","requestId":"7","values":[{"type":"thread.message.delta","sequence":12,"delta":"` +
		strings.Repeat("lorem ipsum dolor sit amet ", 34) + `"}]}`)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if payloadEncoding(Payload{Data: msg}) != EncodingJSON {
			b.Fatal("not JSON")
		}
	}
}

// BenchmarkPayloadEncoding measures the validity check on a 20 KiB JSON body,
// the proxy's costliest per-request step before it was rewritten.
func BenchmarkPayloadEncoding(b *testing.B) {
	body := []byte(`{"threads":[` + strings.Repeat(`{"id":"thr_0123456789","title":"a thread","state":"idle","messages":12},`, 280))
	body = append(body[:len(body)-1], "]}"...)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if payloadEncoding(Payload{Data: body}) != EncodingJSON {
			b.Fatal("not JSON")
		}
	}
}

// TestEncodeLargeNotJSON: a payload of copyBody bytes or more that is not
// JSON (text with a line break, text, invalid UTF-8, binary) is encoded into
// the line as AppendEvent encodes it, its key decided once.
func TestEncodeLargeNotJSON(t *testing.T) {
	big := strings.Repeat("x", copyBody)
	for _, p := range []Payload{
		Text([]byte(`{"a":"` + big + "\"}\n")),
		Text([]byte("event: ping\ndata: " + big)),
		Text([]byte(big + "\xff")),
		{Data: []byte(`["` + big + `"]`), Binary: true},
	} {
		ev := Event{Kind: KindHTTPBody, Conn: "h1", Dir: DirServerToClient, Body: p}
		e, err := Encode(&ev)
		if err != nil {
			t.Fatal(err)
		}
		if e.body != nil {
			t.Errorf("%.20q (%s): payload kept apart from the line", p.Data, p.Encoding())
		}
		if want := appendEventTail(nil, &ev); !bytes.Equal(e.tail, want) {
			t.Errorf("%.20q (%s): encoded %.80q, AppendEvent's tail %.80q", p.Data, p.Encoding(), e.tail, want)
		}
		e.Release()
	}
}
