package record_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
)

// TestWebSocketKindsReplay records a connection with a ping, its pong, a
// message after the client's close frame and both close frames through the
// real proxy, and replays the bundle: replay reads the new kinds (ws.ping,
// ws.pong, two ws.close per connection) without a decode error, and skips
// the plain recording as it does any.
func TestWebSocketKindsReplay(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := c.CloseRead(context.Background())
		c.Ping(ctx)
		c.Write(ctx, websocket.MessageText, []byte(`{"_tag":"Pong"}`))
		<-ctx.Done()
	}))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "ws.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.New(w, nil)
	u, _ := url.Parse(up.URL)
	p, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: u})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := record.Listen(context.Background(), "", p)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, b, err := c.Read(context.Background()); err != nil || string(b) != `{"_tag":"Pong"}` {
		t.Fatalf("client read %q, %v", b, err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	content, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[bundle.Kind]int{}
	for _, ev := range content.Events {
		kinds[ev.Kind]++
	}
	if kinds[bundle.KindWSPing] != 1 || kinds[bundle.KindWSPong] != 1 || kinds[bundle.KindWSClose] != 2 {
		t.Fatalf("recorded kinds %v, want a ping, a pong and two closes", kinds)
	}
	res, err := replay.ReplayFile(context.Background(), path, delivery.Options(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.DecodeErrorCount != 0 || res.Events != uint64(len(content.Events))+1 {
		t.Errorf("replay read %d events with %d decode errors %v, want all %d and none", res.Events, res.DecodeErrorCount, res.DecodeErrors, len(content.Events)+1)
	}
}
