package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// TestRedactStreamedTextSnapshots records what a T3 server sends while a
// provider streams an answer holding a secret in pieces: each update of the
// message carries the text so far (T3's message.updated and
// turn_item.updated, every 50 ms while Codex streams), and the thread's
// projection, fetched after each update, does too. A snapshot taken between
// two pieces of the secret holds its start. The client gets every snapshot
// as sent; the bundle holds no start of the secret of 8 or more characters,
// the fewest that redact takes for one of this length.
func TestRedactStreamedTextSnapshots(t *testing.T) {
	testkit.CheckLeaks(t)
	const secret = "sk-wp-SECRETVALUE123456"
	snapshots := []string{"ACK:", "ACK:sk-wp-SE", "ACK:sk-wp-SECRETV", "ACK:sk-wp-SECRETVALUE12345", "ACK:" + secret}
	var (
		mu   sync.Mutex
		text string
	)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/orchestration/threads/t1":
			mu.Lock()
			defer mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"snapshotSequence":%d,"projection":{"messages":[{"id":"m1","role":"assistant","text":%q,"streaming":%v}]}}`,
				len(text), text, text != "ACK:"+secret)
		case "/ws":
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			ctx := context.Background()
			for seq, s := range snapshots {
				// The client asks for the next update once it has read
				// this one and fetched the projection.
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
				mu.Lock()
				text = s
				mu.Unlock()
				msg := fmt.Sprintf(`{"_tag":"Chunk","requestId":1,"values":[{"kind":"event","sequence":%d,"event":{"type":"message.updated","payload":{"message":{"id":"m1","role":"assistant","text":%q,"streaming":%v}}}}]}`,
					seq, s, s != "ACK:"+secret)
				if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
					return
				}
			}
			c.Read(ctx)
		}
	}))
	defer upstream.Close()
	r := startRecording(t, upstream.URL, &Options{Redact: []string{secret}})

	c := dialProxy(t, r, "/ws", nil)
	var got []string
	for range snapshots {
		if err := c.Write(context.Background(), websocket.MessageText, []byte(`{"_tag":"Ack","requestId":1}`)); err != nil {
			t.Fatal(err)
		}
		_, b, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Values []struct {
				Event struct {
					Payload struct {
						Message struct{ Text string }
					}
				}
			}
		}
		if err := json.Unmarshal(b, &m); err != nil || len(m.Values) != 1 {
			t.Fatalf("the client got %s (%v)", b, err)
		}
		res, err := http.Get(r.URL + "/api/orchestration/threads/t1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if want := fmt.Sprintf("%q", m.Values[0].Event.Payload.Message.Text); !bytes.Contains(body, []byte(want)) {
			t.Errorf("the projection %s does not hold the text the update did, %s", body, want)
		}
		got = append(got, m.Values[0].Event.Payload.Message.Text)
	}
	c.Close(websocket.StatusNormalClosure, "")
	if fmt.Sprint(got) != fmt.Sprint(snapshots) {
		t.Errorf("the client got the snapshots %q, want %q: the relay must not change them", got, snapshots)
	}
	// The server's log line of the text so far ends with a stub.
	r.rec.Emit(&bundle.Event{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStderr, Body: bundle.Text([]byte("assistant text so far: ACK:sk-wp-SECRETVAL"))})
	http.DefaultClient.CloseIdleConnections()
	evs := r.stop()

	raw := testkit.Decompress(t, r.path)
	if i := bytes.Index(raw, []byte(secret[:8])); i >= 0 {
		t.Errorf("the start of the secret is in the bundle: ...%s...", raw[max(0, i-80):min(len(raw), i+40)])
	}
	if n := len(ofKinds(evs, "ws.message")); n != 2*len(snapshots) {
		t.Errorf("%d ws messages recorded, want %d", n, 2*len(snapshots))
	}
	// What redaction leaves is still the text: the first snapshot whole,
	// the others up to where the secret began.
	for _, want := range []string{`"text":"ACK:"`, `"text":"ACK:[REDACTED]"`, `so far: ACK:[REDACTED]`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("the bundle holds no %s", want)
		}
	}
}
