package playback

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/record"
)

// recordSession records drive's traffic to upstream through wireproof's
// recording proxy and returns the bundle's path.
func recordSession(t testing.TB, upstream http.Handler, drive func(base string)) string {
	t.Helper()
	up := httptest.NewServer(upstream)
	defer up.Close()
	path := filepath.Join(t.TempDir(), "recorded.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "playback-test", Started: time.Now()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.New(w, nil)
	u, _ := url.Parse(up.URL)
	proxy, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: u})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := record.Listen(t.Context(), "", proxy)
	if err != nil {
		t.Fatal(err)
	}
	drive(srv.URL)
	if err := srv.Close(context.Background()); err != nil {
		t.Errorf("closing the proxy: %v", err)
	}
	if err := rec.Close(); err != nil {
		t.Fatalf("closing the recording: %v", err)
	}
	return path
}

// startPlayback serves the bundle at path and closes it at cleanup.
func startPlayback(t testing.TB, path string, opts *ServeOptions) *Server {
	t.Helper()
	rec, err := Load(t.Context(), path)
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	srv, err := Serve(t.Context(), rec, opts)
	if err != nil {
		t.Fatalf("serving: %v", err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	return srv
}

// wsServer accepts WebSocket connections and runs serve on each, closing it
// when serve returns. ctx is the request's.
func wsServer(serve func(ctx context.Context, c *websocket.Conn)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		serve(r.Context(), c)
	})
}
