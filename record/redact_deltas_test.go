package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/coder/websocket"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/redact"
)

// t3Pieces is the assistant text TestWebSocketDeltasJoinedAtClose streams,
// in pieces of 9 bytes: the secret is in no piece whole.
func t3Pieces(text string) []string {
	var out []string
	for len(text) > 9 {
		out = append(out, text[:9])
		text = text[9:]
	}
	return append(out, text)
}

// TestWebSocketDeltasJoinedAtClose streams an assistant message over a real
// WebSocket as T3 does (Effect RPC Chunks of thread.message-sent pieces,
// each Chunk sent after the client's Ack of the one before: one piece to a
// Chunk, and several, as T3 sends what queued while it waited for the Ack),
// with a secret split across the pieces, through the recording proxy: the
// client gets every byte unchanged, and the closed bundle holds no 8 bytes
// of the secret, with every message in its place and the joined text
// redacted.
func TestWebSocketDeltasJoinedAtClose(t *testing.T) {
	for _, per := range []int{1, 3} {
		t.Run(fmt.Sprint(per, " values to a Chunk"), func(t *testing.T) { testWebSocketDeltas(t, per) })
	}
}

func testWebSocketDeltas(t *testing.T, per int) {
	testkit.CheckLeaks(t)
	const secret = "boot-7f3a9c21e4b8d6a0"
	text := "ACK:" + secret + " done"
	sent := func(seq int, piece string, streaming bool) any {
		return map[string]any{"kind": "event", "sequence": seq,
			"event": map[string]any{"id": fmt.Sprint("ev", seq), "type": "thread.message-sent",
				"payload": map[string]any{"threadId": "thr_1", "messageId": "msg_1", "role": "assistant", "text": piece, "streaming": streaming}}}
	}
	var values []any
	for i, p := range t3Pieces(text) {
		values = append(values, sent(i+1, p, true))
	}
	values = append(values, sent(99, "", false))
	var msgs [][]byte
	for len(values) > 0 {
		n := min(per, len(values))
		b, _ := json.Marshal(map[string]any{"_tag": "Chunk", "requestId": 4, "values": values[:n]})
		msgs, values = append(msgs, b), values[n:]
	}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		if _, _, err := c.Read(ctx); err != nil { // the Request
			return
		}
		for _, m := range msgs {
			if c.Write(ctx, websocket.MessageText, m) != nil {
				return
			}
			if _, _, err := c.Read(ctx); err != nil { // its Ack
				return
			}
		}
		c.Write(ctx, websocket.MessageText, []byte(`{"_tag":"Exit","requestId":4,"exit":{"_tag":"Success","value":null}}`))
		c.Read(ctx) // until the client closes
	}))
	defer upstream.Close()

	path := filepath.Join(t.TempDir(), "run.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := New(w, &Options{File: path, Redact: []string{secret}})
	u, _ := url.Parse(upstream.URL)
	p, err := NewProxy(rec, &ProxyOptions{Upstream: u})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Listen(context.Background(), "", p)
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, "ws"+srv.URL[len("http"):]+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"_tag":"Request","id":4,"tag":"orchestration.subscribeThread","payload":{"threadId":"thr_1"},"headers":[]}`))
	var got []byte
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`"Exit"`)) {
			break
		}
		got = append(got, t3Text(t, b)...)
		c.Write(ctx, websocket.MessageText, []byte(`{"_tag":"Ack","requestId":4}`))
	}
	c.Close(websocket.StatusNormalClosure, "")
	if string(got) != text {
		t.Errorf("the client folded %q, want %q: the relay changed the stream", got, text)
	}
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	raw := testkit.Decompress(t, path)
	for i := 0; i+8 <= len(secret); i++ {
		if bytes.Contains(raw, []byte(secret[i:i+8])) {
			t.Errorf("the bundle holds %q of the secret", secret[i:i+8])
		}
	}
	var folded []byte
	var s2c, c2s int
	for _, ev := range readBundle(t, path) {
		if ev.Kind != bundle.KindWSMessage {
			continue
		}
		if ev.Dir == bundle.DirClientToServer {
			c2s++
			continue
		}
		s2c++
		if !bytes.Contains(ev.Body.Data, []byte(`"Exit"`)) {
			folded = append(folded, t3Text(t, ev.Body.Data)...)
		}
	}
	if want := "ACK:" + redact.Redacted + " done"; string(folded) != want {
		t.Errorf("the bundle's pieces join to %q, want %q", folded, want)
	}
	if n := len(msgs) + 1; s2c != n || c2s != n {
		t.Errorf("%d messages to the client and %d from it recorded, want %d each", s2c, c2s, n)
	}
}

// t3Text is the text of the thread.message-sent values of a Chunk, joined,
// read with encoding/json.
func t3Text(t *testing.T, b []byte) string {
	t.Helper()
	var m struct {
		Values []struct {
			Event struct {
				Payload struct {
					Text string `json:"text"`
				} `json:"payload"`
			} `json:"event"`
		} `json:"values"`
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.Values) == 0 {
		t.Fatalf("not a Chunk: %v: %s", err, b)
	}
	var text string
	for _, v := range m.Values {
		text += v.Event.Payload.Text
	}
	return text
}
