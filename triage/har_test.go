package triage

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

func TestHARGolden(t *testing.T) {
	tl := load(t, liveFailing, nil)
	var buf bytes.Buffer
	if err := WriteHAR(&buf, tl, &HAROptions{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("testdata", "har/idle-duplicate-notification.har"), buf.Bytes())
}

// TestHARRequiredFields checks every bundle of the corpora against the fields
// HAR 1.2 requires and the WebSocket extension Chrome reads.
func TestHARRequiredFields(t *testing.T) {
	paths, err := filepath.Glob("../fixtures/golden/*.zst")
	if err != nil {
		t.Fatal(err)
	}
	live, _ := filepath.Glob("../fixtures/golden/live/*.zst")
	paths = append(paths, live...)
	if len(paths) < 10 {
		t.Fatalf("found %d bundles, expected the golden corpora", len(paths))
	}
	for _, path := range paths {
		t.Run(strings.TrimPrefix(path, "../fixtures/golden/"), func(t *testing.T) {
			tl := load(t, path, nil)
			var buf bytes.Buffer
			if err := WriteHAR(&buf, tl, nil); err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			checkHAR(t, doc, len(tl.HTTP)+len(tl.WS))
		})
	}
}

func checkHAR(t *testing.T, doc map[string]any, wantEntries int) {
	t.Helper()
	log := obj(t, doc, "log")
	if v := log["version"]; v != "1.2" {
		t.Errorf("log.version %v, want 1.2", v)
	}
	if name := obj(t, log, "creator")["name"]; name != "wireproof" {
		t.Errorf("log.creator.name %v", name)
	}
	str(t, obj(t, log, "creator"), "version")
	entries, ok := log["entries"].([]any)
	if !ok {
		t.Fatalf("log.entries is %T", log["entries"])
	}
	if len(entries) != wantEntries {
		t.Errorf("%d entries, want %d", len(entries), wantEntries)
	}
	for i, e := range entries {
		e := e.(map[string]any)
		if _, err := time.Parse(time.RFC3339Nano, str(t, e, "startedDateTime")); err != nil {
			t.Errorf("entry %d: startedDateTime: %v", i, err)
		}
		if num(t, e, "time") < 0 {
			t.Errorf("entry %d: negative time", i)
		}
		obj(t, e, "cache")
		tm := obj(t, e, "timings")
		for _, k := range []string{"send", "wait", "receive"} {
			if num(t, tm, k) < 0 {
				t.Errorf("entry %d: timings.%s negative", i, k)
			}
		}
		req := obj(t, e, "request")
		for _, k := range []string{"method", "url", "httpVersion"} {
			str(t, req, k)
		}
		for _, k := range []string{"cookies", "headers", "queryString"} {
			arr(t, req, k)
		}
		num(t, req, "headersSize")
		num(t, req, "bodySize")
		if !strings.Contains(req["url"].(string), "://") {
			t.Errorf("entry %d: url %v is not absolute", i, req["url"])
		}
		resp := obj(t, e, "response")
		num(t, resp, "status")
		for _, k := range []string{"statusText", "httpVersion", "redirectURL"} {
			str(t, resp, k)
		}
		arr(t, resp, "cookies")
		arr(t, resp, "headers")
		num(t, resp, "headersSize")
		num(t, resp, "bodySize")
		content := obj(t, resp, "content")
		num(t, content, "size")
		str(t, content, "mimeType")
		if e["_resourceType"] == "websocket" {
			for j, m := range arr(t, e, "_webSocketMessages") {
				m := m.(map[string]any)
				if ty := m["type"]; ty != "send" && ty != "receive" {
					t.Errorf("entry %d message %d: type %v", i, j, ty)
				}
				if op := num(t, m, "opcode"); op != 1 && op != 2 {
					t.Errorf("entry %d message %d: opcode %v", i, j, op)
				}
				if num(t, m, "time") < 1e9 {
					t.Errorf("entry %d message %d: time %v is not epoch seconds", i, j, m["time"])
				}
				str(t, m, "data")
			}
		}
	}
}

func obj(t *testing.T, m map[string]any, k string) map[string]any {
	t.Helper()
	v, ok := m[k].(map[string]any)
	if !ok {
		t.Fatalf("%s: want an object, got %T", k, m[k])
	}
	return v
}

func str(t *testing.T, m map[string]any, k string) string {
	t.Helper()
	v, ok := m[k].(string)
	if !ok {
		t.Errorf("%s: want a string, got %T", k, m[k])
	}
	return v
}

func num(t *testing.T, m map[string]any, k string) float64 {
	t.Helper()
	v, ok := m[k].(float64)
	if !ok {
		t.Errorf("%s: want a number, got %T", k, m[k])
	}
	return v
}

func arr(t *testing.T, m map[string]any, k string) []any {
	t.Helper()
	v, ok := m[k].([]any)
	if !ok {
		t.Errorf("%s: want an array, got %T", k, m[k])
	}
	return v
}

// TestHARBodies checks that text stays text, binary is base64 with an
// encoding, and redacted values stay redacted.
func TestHARBodies(t *testing.T) {
	bin := []byte{0xff, 0x00, 0x01}
	path := writeBundle(t,
		&bundle.Event{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "POST", URL: "/upload?a=1&token=[REDACTED]",
			Header: map[string][]string{"Content-Type": {"application/octet-stream"}, "Authorization": {"Bearer [REDACTED]"}}},
		&bundle.Event{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirClientToServer, Body: bundle.Binary(bin)},
		&bundle.Event{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200, Header: map[string][]string{"Content-Type": {"text/plain"}}},
		&bundle.Event{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte("hel"))},
		&bundle.Event{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte("lo"))},
		&bundle.Event{Kind: bundle.KindHTTPEnd, Conn: "h1", Size: 5},
		&bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws?wsTicket=[REDACTED]"},
		&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText, Body: bundle.Text([]byte(`{"_tag":"Ping"}`))},
		&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeBinary, Body: bundle.Binary(bin)},
	)
	tl := load(t, path, nil)
	h := BuildHAR(tl, nil)
	if len(h.Log.Entries) != 2 {
		t.Fatalf("%d entries, want 2", len(h.Log.Entries))
	}
	x, ws := h.Log.Entries[0], h.Log.Entries[1]
	type bodies struct {
		PostText, PostEncoding, RespText, RespEncoding, Query string
		WS                                                    []HARWSMessage
	}
	got := bodies{PostText: x.Request.PostData.Text, PostEncoding: x.Request.PostData.Encoding,
		RespText: x.Response.Content.Text, RespEncoding: x.Response.Content.Encoding, Query: x.Request.QueryString[1].Value}
	for _, m := range ws.WSMessages {
		got.WS = append(got.WS, HARWSMessage{Type: m.Type, Opcode: m.Opcode, Data: m.Data})
	}
	want := bodies{PostText: "/wAB", PostEncoding: "base64", RespText: "hello", Query: "[REDACTED]",
		WS: []HARWSMessage{{Type: "send", Opcode: 1, Data: `{"_tag":"Ping"}`}, {Type: "receive", Opcode: 2, Data: "/wAB"}}}
	if diff := cmpDiff(want, got); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
	if ws.ResourceType != "websocket" || !strings.Contains(ws.Request.URL, "wsTicket=[REDACTED]") {
		t.Errorf("ws entry: resource type %q, url %q", ws.ResourceType, ws.Request.URL)
	}
}
