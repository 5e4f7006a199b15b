package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sampleEvents has one event of every kind and every payload encoding.
func sampleEvents() []Event {
	return []Event{
		{Kind: KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/api/thread?x=1&token=[REDACTED]",
			Header: http.Header{"Accept": {"application/json"}, "X-Multi": {"a", "b"}}},
		{Kind: KindHTTPBody, Conn: "h1", Dir: DirClientToServer, Body: Text([]byte(`{"a":"<b>&</b>"}`))},
		{Kind: KindHTTPResponse, Conn: "h1", Status: 200, Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}},
		{Kind: KindHTTPBody, Conn: "h1", Dir: DirServerToClient, Body: Text([]byte("line one\nline \"two\"\t\x01\x7f é 😀"))},
		{Kind: KindHTTPEnd, Conn: "h1", Size: 1234, Truncated: true, Err: "upstream closed"},
		{Kind: KindWSOpen, Conn: "ws1", URL: "/ws?ticket=[REDACTED]", Name: "effect-rpc",
			Attrs: json.RawMessage(`{"clientCompressed":true,"upstreamCompressed":false}`)},
		{Kind: KindWSMessage, Conn: "ws1", Dir: DirClientToServer, Type: TypeText,
			Body: Text([]byte(`{"_tag":"Request","id":0,"tag":"x","payload":{},"headers":[]}`))},
		{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeText, Body: Text([]byte(` [1, 2 ,3]	`))},
		{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeBinary, Body: Binary([]byte{0, 1, 2, 0xff})},
		{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeBinary, Body: Binary([]byte(`{"binary":"json"}`))},
		{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeText, Body: Text([]byte{'a', 0xc3, 0x28})},
		{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeText, Body: Text([]byte{})},
		{Kind: KindWSClose, Conn: "ws1", Dir: DirServerToClient, Code: 1011, Reason: "bye", Err: "abnormal"},
		{Kind: KindGateRequest, Conn: "gate", Method: "POST", URL: "/gate/parent", Header: http.Header{"X": {""}}},
		{Kind: KindGateRelease, Conn: "gate", URL: "/gate/parent", Status: 200, Body: Text([]byte("RESULT_123"))},
		{Kind: KindProcStart, Conn: "server", Attrs: json.RawMessage(`{"argv":["t3","start"],"pid":42,"dir":"/tmp"}`)},
		{Kind: KindProcLog, Conn: "server", Type: TypeStderr, Body: Text([]byte("startup phase: complete"))},
		{Kind: KindProcReady, Conn: "server", Body: Text([]byte("startup phase: complete"))},
		{Kind: KindProcSignal, Conn: "server", Name: "SIGTERM"},
		{Kind: KindProcExit, Conn: "server", Code: -1, Name: "SIGKILL", Err: "signal: killed"},
		{Kind: KindStdioLine, Conn: "codex", Dir: DirServerToClient, Body: Text([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))},
		{Kind: KindArtifact, Name: "prompt.txt", Body: Text([]byte("Do the thing.\n"))},
		{Kind: KindMark, Name: "phase", Body: Text([]byte(`{"phase":"running"}`))},
		{Kind: KindVerdict, Body: Text([]byte(`{"ok":true}`))},
		{Kind: "future.kind", Conn: "x", Body: Text([]byte("unknown kinds are carried through"))},
	}
}

func TestEventRoundTrip(t *testing.T) {
	for i, ev := range sampleEvents() {
		ev.Seq, ev.T = uint64(i+1), int64(i)*1e6
		t.Run(string(ev.Kind)+"/"+string(ev.Body.Encoding()), func(t *testing.T) {
			line := AppendEvent(nil, &ev)
			if !json.Valid(line) {
				t.Fatalf("line is not valid JSON: %s", line)
			}
			if bytes.ContainsAny(line, "\r\n") {
				t.Fatalf("line contains a line break: %q", line)
			}
			var got Event
			if err := DecodeEvent(line, &got); err != nil {
				t.Fatalf("DecodeEvent(%s): %v", line, err)
			}
			if diff := cmp.Diff(ev, got); diff != "" {
				t.Errorf("round trip of %s (-want +got):\n%s", line, diff)
			}
		})
	}
}

func TestAppendEventEncoding(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"json verbatim, not HTML-escaped or compacted",
			Event{Seq: 1, T: 2, Kind: KindWSMessage, Conn: "ws1", Dir: DirClientToServer, Type: TypeText, Body: Text([]byte(`{"a": "<&>"}`))},
			`{"seq":1,"t":2,"kind":"ws.message","conn":"ws1","dir":"c2s","type":"text","json":{"a": "<&>"}}`},
		{"text as a JSON string",
			Event{Seq: 1, Kind: KindProcLog, Type: TypeStdout, Body: Text([]byte("a \"q\"\n<b>"))},
			`{"seq":1,"t":0,"kind":"proc.log","type":"stdout","text":"a \"q\"\n<b>"}`},
		{"json with a line break is text",
			Event{Seq: 1, Kind: KindStdioLine, Body: Text([]byte("{\n}"))},
			`{"seq":1,"t":0,"kind":"stdio.line","text":"{\n}"}`},
		{"binary frame is base64 and flagged",
			Event{Seq: 1, Kind: KindWSMessage, Type: TypeBinary, Body: Binary([]byte("{}"))},
			`{"seq":1,"t":0,"kind":"ws.message","type":"binary","b64":"e30=","binary":true}`},
		{"invalid UTF-8 text is base64, not flagged",
			Event{Seq: 1, Kind: KindHTTPBody, Body: Text([]byte{0xff})},
			`{"seq":1,"t":0,"kind":"http.body","b64":"/w=="}`},
		{"empty payload is an empty string",
			Event{Seq: 1, Kind: KindHTTPBody, Body: Text([]byte{})},
			`{"seq":1,"t":0,"kind":"http.body","text":""}`},
		{"header sorted, ints and flags",
			Event{Seq: 3, T: 4, Kind: KindHTTPEnd, Status: 500, Code: -1, Size: 7, Truncated: true, Err: "x",
				Header: http.Header{"B": {"2"}, "A": {"1", "\x01"}}},
			`{"seq":3,"t":4,"kind":"http.end","status":500,"code":-1,"header":{"A":["1","\u0001"],"B":["2"]},"size":7,"truncated":true,"err":"x"}`},
		{"invalid UTF-8 in a string field becomes U+FFFD",
			Event{Seq: 1, Kind: KindWSClose, Reason: "a\xffb"},
			`{"seq":1,"t":0,"kind":"ws.close","reason":"a\ufffdb"}`},
		{"attrs that are not JSON are written as a string",
			Event{Seq: 1, Kind: KindProcStart, Attrs: json.RawMessage("{oops")},
			`{"seq":1,"t":0,"kind":"proc.start","attrs":"{oops"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(AppendEvent(nil, &tc.ev))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AppendEvent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeEventErrors(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"not an object", `[1]`, "want '{'"},
		{"empty object", `{}`, "empty object"},
		{"missing seq", `{"t":0,"kind":"x"}`, "missing seq"},
		{"missing t", `{"seq":0,"kind":"x"}`, "missing t"},
		{"missing kind", `{"seq":0,"t":0}`, "missing kind"},
		{"seq not an integer", `{"seq":1.5,"t":0,"kind":"x"}`, "seq is not an unsigned integer"},
		{"negative seq", `{"seq":-1,"t":0,"kind":"x"}`, "seq is not an unsigned integer"},
		{"kind not a string", `{"seq":1,"t":0,"kind":3}`, "kind is not a string"},
		{"two payloads", `{"seq":1,"t":0,"kind":"x","json":1,"text":"a"}`, "more than one payload key"},
		{"bad json payload", `{"seq":1,"t":0,"kind":"x","json":{"a":}}`, "json payload is not a JSON value"},
		{"text payload not a string", `{"seq":1,"t":0,"kind":"x","text":1}`, "text payload is not a JSON string"},
		{"bad base64", `{"seq":1,"t":0,"kind":"x","b64":"!!"}`, "b64 payload is not standard base64"},
		{"trailing data", `{"seq":1,"t":0,"kind":"x"} x`, "data after the object"},
		{"unterminated", `{"seq":1,"t":0,"kind":"x"`, "want ',' or '}'"},
		{"bad header", `{"seq":1,"t":0,"kind":"x","header":{"a":"b"}}`, "header is not an object of string arrays"},
		{"duplicate key", `{"seq":1,"t":0,"kind":"x","name":"a","name":"b"}`, `duplicate key "name"`},
		{"duplicate key, one escaped", `{"seq":1,"t":0,"kind":"x","s\u0065q":2}`, `duplicate key "seq"`},
		{"duplicate payload key", `{"seq":1,"t":0,"kind":"x","json":1,"json":2}`, `duplicate key "json"`},
		{"duplicate unknown key", `{"seq":1,"t":0,"kind":"x","extra":1,"extra":2}`, `duplicate key "extra"`},
		{"control byte in string", "{\"seq\":1,\"t\":0,\"kind\":\"a\x01\"}", "kind is not a string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ev Event
			err := DecodeEvent([]byte(tc.line), &ev)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeEvent(%s) = %v, want an error containing %q", tc.line, err, tc.want)
			}
			if !errors.Is(err, errSyntax) {
				t.Errorf("error %v does not wrap errSyntax", err)
			}
		})
	}
}

func TestDecodeEventSkipsUnknownKeysAndEscapes(t *testing.T) {
	line := `{ "seq" : 5 , "t":6,"future":{"a":[1,true,null,"x\"y"]},"kind":"ws.message","conn":"w\u0073\ud83d\ude00",` +
		`"text":"\u00e9\/\b\f\r\t\\","size":-2}`
	var got Event
	if err := DecodeEvent([]byte(line), &got); err != nil {
		t.Fatal(err)
	}
	want := Event{Seq: 5, T: 6, Kind: KindWSMessage, Conn: "ws😀", Body: Text([]byte("é/\b\f\r\t\\")), Size: -2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeEvent (-want +got):\n%s", diff)
	}
}

// FuzzPayload checks that every payload, text or binary, comes back exactly.
func FuzzPayload(f *testing.F) {
	for _, ev := range sampleEvents() {
		f.Add(ev.Body.Data, ev.Body.Binary)
	}
	f.Add([]byte(" 1 "), false)
	f.Add([]byte("\"\\u2028\""), false)
	f.Add([]byte("\xed\xa0\x80"), false)
	f.Fuzz(func(t *testing.T, data []byte, binary bool) {
		in := Event{Seq: 1, Kind: KindWSMessage, Body: Payload{Data: data, Binary: binary}}
		line := AppendEvent(nil, &in)
		if bytes.ContainsAny(line, "\r\n") || !json.Valid(line) {
			t.Fatalf("line for %q is not one JSON line: %q", data, line)
		}
		var out Event
		if err := DecodeEvent(line, &out); err != nil {
			t.Fatalf("DecodeEvent(%q): %v", line, err)
		}
		if diff := cmp.Diff(in.Body, out.Body); diff != "" {
			t.Errorf("payload round trip via %q (-want +got):\n%s", line, diff)
		}
	})
}

// FuzzDecodeEvent checks that the line parser never panics, and that what it
// accepts encodes to a line it decodes to the same event.
func FuzzDecodeEvent(f *testing.F) {
	for _, ev := range sampleEvents() {
		f.Add(AppendEvent(nil, &ev))
	}
	f.Add([]byte(`{"seq":1,"t":0,"kind":"x","json":[{"a":[]}]}`))
	f.Add([]byte(`{"seq":1,"t":0,"kind":"x","name":"a","n\u0061me":"b"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var ev Event
		if err := DecodeEvent(line, &ev); err != nil {
			return
		}
		again := AppendEvent(nil, &ev)
		var ev2 Event
		if err := DecodeEvent(again, &ev2); err != nil {
			t.Fatalf("re-encoded line %q does not decode: %v", again, err)
		}
		if diff := cmp.Diff(ev, ev2); diff != "" {
			t.Errorf("re-encode of %q (-want +got):\n%s", line, diff)
		}
	})
}

// FuzzPayloadEncoding checks that the writer's fast choice of payload key is
// the one Payload.Encoding documents.
func FuzzPayloadEncoding(f *testing.F) {
	for _, ev := range sampleEvents() {
		f.Add(ev.Body.Data, ev.Body.Binary)
	}
	for _, s := range []string{"", " ", "1e", "-0.5E+3", "01", `"\u12"`, `{"a":1,}`, "[1 2]", "nul", "\"\x7f\"", "\t{}\t", strings.Repeat("[", 10001) + strings.Repeat("]", 10001)} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, binary bool) {
		p := Payload{Data: data, Binary: binary}
		if got, want := payloadEncoding(p), p.Encoding(); got != want {
			t.Errorf("payloadEncoding(%q) = %q, Payload.Encoding = %q", data, got, want)
		}
	})
}

func TestPayloadEncodingDepth(t *testing.T) {
	for _, n := range []int{9999, 10000, 10001} {
		p := Text([]byte(strings.Repeat("[", n) + strings.Repeat("]", n)))
		if got, want := payloadEncoding(p), p.Encoding(); got != want {
			t.Errorf("%d nested arrays: payloadEncoding = %q, Payload.Encoding = %q", n, got, want)
		}
	}
}

// TestSkippedBadBase64: a b64 payload that does not decode is an error even
// for a reader that skips its kind's payloads (inspect --json, index), as
// it is for every reader that decodes it.
func TestSkippedBadBase64(t *testing.T) {
	d := lineDecoder{skipBody: func(Kind) bool { return true }}
	var ev Event
	err := d.decode([]byte(`{"seq":1,"t":0,"kind":"ws.message","b64":"!!"}`), &ev)
	if err == nil || !strings.Contains(err.Error(), "b64 payload is not standard base64") {
		t.Fatalf("skipped bad base64: %v, want the decode error", err)
	}
	if err := d.decode([]byte(`{"seq":1,"t":0,"kind":"ws.message","b64":"aGk="}`), &ev); err != nil || ev.Body.Data != nil {
		t.Fatalf("skipped good base64: %v, body %q; want no error and no body", err, ev.Body.Data)
	}
}
