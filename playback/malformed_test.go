package playback

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/t3"
)

// TestMalformedEffectMessages: a client message an Effect RPC connection
// cannot decode (not JSON, an unknown tag, a Request without id, a binary
// frame) is answered with a Defect naming what was wrong, counted as a miss
// (so --strict fails), and in a recorded session both the message and the
// miss are in the bundle. The connection goes on serving.
func TestMalformedEffectMessages(t *testing.T) {
	path := recordSession(t, effectServer(t, false), func(base string) {
		c := dialRPC(t, base, false)
		driveEffect(t, c, [3]string{`"1"`, `"2"`, `"3"`}, t3.NewUUID(), false)
		c.c.Close(websocket.StatusNormalClosure, "")
	})
	out := filepath.Join(t.TempDir(), "played.zst")
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}, Output: out})
	c := dialRPC(t, srv.URL, false)
	bad := []struct{ send, reason string }{
		{`{"_tag":"Request","id":`, "not an Effect RPC message: unexpected end of JSON input"},
		{`{"_tag":"Bogus","id":"1"}`, `unknown message tag "Bogus"`},
		{`{"_tag":"Request","tag":"echo","payload":{}}`, "Request without id"},
		{`"hello"`, "not an Effect RPC message: not an RPC message"},
	}
	for _, b := range bad {
		c.send("%s", b.send)
		m := c.expect(effectrpc.TagDefect, "")
		var defect string
		json.Unmarshal(m.Defect, &defect)
		if !strings.Contains(defect, b.reason) {
			t.Errorf("%s: defect %q does not say %q", b.send, defect, b.reason)
		}
	}
	if err := c.c.Write(t.Context(), websocket.MessageBinary, []byte{0xde, 0xad, 0xbe, 0xef}); err != nil {
		t.Fatal(err)
	}
	m := c.expect(effectrpc.TagDefect, "")
	if !strings.Contains(string(m.Defect), "binary frame of 4 bytes: deadbeef") {
		t.Errorf("binary frame: defect %s", m.Defect)
	}
	// The connection still serves.
	driveEffect(t, c, [3]string{`1`, `2`, `3`}, t3.NewUUID(), false)
	c.c.Close(websocket.StatusNormalClosure, "")

	rep, err := srv.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Misses) != len(bad)+1 || rep.Clean() {
		t.Fatalf("report %+v: want %d misses, not clean", rep, len(bad)+1)
	}
	for i, miss := range rep.Misses {
		if miss.Kind != "message" || miss.Reason == "" || !strings.Contains(miss.String(), "on a connection recorded as ws") {
			t.Errorf("miss %d %+v: want a message miss explained, naming the recorded connection", i, miss)
		}
	}
	// The session's bundle holds the malformed frames and a mark per miss.
	got, err := bundle.ReadFile(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	marks, frames := 0, 0
	for _, ev := range got.Events {
		switch {
		case ev.Kind == bundle.KindMark && ev.Name == MarkMiss:
			marks++
		case ev.Kind == bundle.KindWSMessage && ev.Dir == bundle.DirClientToServer &&
			(strings.Contains(string(ev.Body.Data), "Bogus") || string(ev.Body.Data) == "\xde\xad\xbe\xef"):
			frames++
		}
	}
	if marks != len(bad)+1 || frames != 2 {
		t.Errorf("bundle: %d miss marks, %d malformed frames; want %d and 2", marks, frames, len(bad)+1)
	}
}

// TestMalformedJSONRPCMessages: on a JSON-RPC connection invalid JSON and a
// malformed Effect control message get a JSON-RPC error with a null id and
// count as misses; a notification (no id) is not a miss.
func TestMalformedJSONRPCMessages(t *testing.T) {
	path := recordSession(t, jsonRPCServer(), func(base string) {
		_, _, c := driveJSONRPC(t, base, [2]string{`1`, `2`}, t3.NewUUID())
		c.Close(websocket.StatusNormalClosure, "")
	})
	srv := startPlayback(t, path, nil) // recorded timing: the tick comes after the subscribe's answer
	_, _, c := driveJSONRPC(t, srv.URL, [2]string{`1`, `2`}, t3.NewUUID())
	ctx := t.Context()
	for _, b := range []string{`{"jsonrpc":"2.0","id":5,"method":`, `{"jsonrpc":"2.0","method":"@effect/rpc/Ack","params":{}}`} {
		c.Write(ctx, websocket.MessageText, []byte(b))
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var r jsonRPCReply
		json.Unmarshal(data, &r)
		if string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "not a JSON-RPC 2.0 message") {
			t.Errorf("%s: reply %s, want a JSON-RPC error with a null id saying what was wrong", b, data)
		}
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"cancelled","params":{}}`))
	c.Close(websocket.StatusNormalClosure, "")
	rep, _ := srv.Close(context.Background())
	if len(rep.Misses) != 2 {
		t.Errorf("report %+v: want the two malformed messages as misses, not the notification", rep)
	}
}

// TestMissesListCapped: a client flooding playback with messages nothing
// matches gets every one answered and counted, but the report lists only the
// first MaxListedMisses, so playback's memory does not grow with the flood.
func TestMissesListCapped(t *testing.T) {
	path := recordSession(t, effectServer(t, false), func(base string) {
		c := dialRPC(t, base, false)
		c.send(`{"_tag":"Ping"}`)
		c.expect(effectrpc.TagPong, "")
		c.c.Close(websocket.StatusNormalClosure, "")
	})
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	c := dialRPC(t, srv.URL, false)
	const n = MaxListedMisses + 200
	for range n {
		c.send(`garbage`)
		c.expect(effectrpc.TagDefect, "")
	}
	c.c.Close(websocket.StatusNormalClosure, "")
	rep, err := srv.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Missed != n || len(rep.Misses) != MaxListedMisses || rep.Clean() {
		t.Errorf("missed %d, %d listed; want %d counted, %d listed", rep.Missed, len(rep.Misses), n, MaxListedMisses)
	}
	if !strings.Contains(rep.Summary(), "missed 1200,") || !strings.Contains(rep.Summary(), "... and 200 more misses, not listed") {
		t.Errorf("summary does not give the count and what is not listed:\n%.300s", rep.Summary())
	}
}

// TestMalformedRequests: an HTTP body over MaxBody gets 413 and a failed
// WebSocket upgrade its 400, each counted as an explained miss; the failed
// upgrade does not mark the recorded connection played, so it is still
// reported as never played.
func TestMalformedRequests(t *testing.T) {
	path := recordSession(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ws" {
			effectServer(t, false).ServeHTTP(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("ok"))
	}), func(base string) {
		resp, err := http.Post(base+"/upload", "text/plain", strings.NewReader("small"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c := dialRPC(t, base, false)
		c.send(`{"_tag":"Ping"}`)
		c.expect(effectrpc.TagPong, "")
		c.c.Close(websocket.StatusNormalClosure, "")
	})
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}, MaxBody: 16}})
	resp, err := http.Post(srv.URL+"/upload", "text/plain", strings.NewReader(strings.Repeat("x", 100)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "its body could not be read") {
		t.Errorf("oversized body: %d %q, want 413 explaining the miss", resp.StatusCode, b)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/ws", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket") // no Sec-WebSocket-Version or key
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 4 {
		t.Errorf("malformed upgrade: %d, want a 4xx", resp.StatusCode)
	}
	rep, err := srv.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, m := range rep.Misses {
		kinds = append(kinds, m.Kind)
	}
	if rep.Missed != 2 || strings.Join(kinds, ",") != "http exchange,websocket connection" || rep.Played != 0 {
		t.Errorf("report %+v: want the two requests as misses and nothing played", rep)
	}
	if len(rep.Unplayed) != 2 {
		t.Errorf("never played %+v: want the upload and the WebSocket connection", rep.Unplayed)
	}
}

// TestMessageTooBig: a client message over MaxMessageSize closes the
// connection with 1009, as the read limit requires, and is an explained
// miss rather than a silent end.
func TestMessageTooBig(t *testing.T) {
	path := recordSession(t, effectServer(t, false), func(base string) {
		c := dialRPC(t, base, false)
		c.send(`{"_tag":"Ping"}`)
		c.expect(effectrpc.TagPong, "")
		c.c.Close(websocket.StatusNormalClosure, "")
	})
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}, MaxMessageSize: 1024}})
	c := dialRPC(t, srv.URL, false)
	c.send(`{"_tag":"Ping","pad":%q}`, strings.Repeat("x", 2048))
	_, _, err := c.c.Read(t.Context())
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("read after an oversized message: %v, want a 1009 close", err)
	}
	rep, err := srv.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Missed != 1 || !strings.Contains(rep.Misses[0].String(), "over the 1024-byte read limit") {
		t.Errorf("report %+v: want the oversized message as a miss", rep)
	}
}
