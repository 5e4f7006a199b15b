package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
)

// mcpUpstream is a loopback MCP server of the Streamable HTTP transport, in
// the shape T3 serves its providers: server/discover is answered 400 with no
// body, initialize opens a session (Mcp-Session-Id), notifications are
// accepted 202, and tools/call is answered with server-sent events (a
// progress notification, then the result). A tools/call whose arguments say
// "hold" waits for release before its result.
type mcpUpstream struct {
	sessions atomic.Int64
	held     chan struct{} // a held call began
	release  chan struct{}
}

func (u *mcpUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments struct {
				Hold bool `json:"hold"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch msg.Method {
	case "server/discover":
		w.WriteHeader(http.StatusBadRequest) // no body, as T3 answers it
	case "initialize":
		w.Header().Set("Mcp-Session-Id", fmt.Sprintf("session-%d", u.sessions.Add(1)))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}`, msg.ID)
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
	case "tools/call":
		if r.Header.Get("Mcp-Session-Id") == "" {
			http.Error(w, "no session", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		if msg.Params.Arguments.Hold {
			u.held <- struct{}{}
			select {
			case <-u.release:
			case <-r.Context().Done():
				return
			}
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", msg.ID)
	default:
		http.Error(w, "unknown method", http.StatusNotFound)
	}
}

// mcpClient posts JSON-RPC messages to the MCP endpoint as a provider
// process's client does, keeping the session it is given.
type mcpClient struct {
	t       *testing.T
	url     string
	session string
}

// post sends one message and returns the status and the whole body.
func (c *mcpClient) post(ctx context.Context, body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/mcp", strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Errorf("POST %s: %v", body, err)
		return 0, ""
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Errorf("reading the answer to %s: %v", body, err)
	}
	if s := res.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	return res.StatusCode, string(b)
}

// open is how each provider process's client opens: server/discover (id 1,
// answered 400), then initialize (id 1 again) and the initialized
// notification.
func (c *mcpClient) open(ctx context.Context) {
	c.t.Helper()
	if status, _ := c.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`); status != http.StatusBadRequest {
		c.t.Errorf("server/discover answered %d, want 400", status)
	}
	if status, _ := c.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); status != http.StatusOK || c.session == "" {
		c.t.Errorf("initialize answered %d with session %q", status, c.session)
	}
	c.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// recordMCP records what drive does against a loopback MCP upstream through
// the real recording proxy, and returns the bundle's path.
func recordMCP(t *testing.T, drive func(ctx context.Context, proxyURL string, up *mcpUpstream)) string {
	return recordMCPStopping(t, func(ctx context.Context, proxyURL string, up *mcpUpstream, _ func()) { drive(ctx, proxyURL, up) })
}

// recordMCPStopping is recordMCP with a func that stops the upstream server
// mid-drive.
func recordMCPStopping(t *testing.T, drive func(ctx context.Context, proxyURL string, up *mcpUpstream, stop func())) string {
	up := &mcpUpstream{held: make(chan struct{}, 4), release: make(chan struct{})}
	return recordUpstream(t, up, func(ctx context.Context, proxyURL string, stop func()) { drive(ctx, proxyURL, up, stop) })
}

// recordUpstream records what drive does against a loopback server of
// upstream through the real recording proxy, and returns the bundle's path;
// stop closes the upstream server.
func recordUpstream(t *testing.T, upstream http.Handler, drive func(ctx context.Context, proxyURL string, stop func())) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := httptest.NewServer(upstream)
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "mcp.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.New(w, nil)
	u, _ := url.Parse(srv.URL)
	// The proxy's transport is the test's, so stop can drop its idle
	// connections with the server: a request after stop then dials and is
	// refused, rather than going out on a kept-alive connection whose end
	// the transport may not have read yet (then it ends with EOF).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	defer tr.CloseIdleConnections()
	p, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: u, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := record.Listen(ctx, "127.0.0.1:0", p)
	if err != nil {
		t.Fatal(err)
	}
	drive(ctx, ps.URL, func() { srv.Close(); tr.CloseIdleConnections() })
	http.DefaultClient.CloseIdleConnections() // the clients' kept-alive connections end with the test
	if err := ps.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// mcpCalls replays the bundle at path with a Tap and describes its
// JSON-RPC calls as they ended, in order.
func mcpCalls(t *testing.T, path string) (*replay.Result, []string, map[string]*protocol.Event) {
	t.Helper()
	var ends []string
	requests := map[string]*protocol.Event{} // by method, the first request's event
	tap := &replay.Tap{Protocol: func(pe *protocol.Event) {
		if pe.Protocol != protocol.JSONRPC || pe.Call == nil {
			return
		}
		switch pe.Kind {
		case protocol.KindRequest:
			if requests[pe.Method] == nil {
				c := *pe
				requests[pe.Method] = &c
			}
		case protocol.KindResponse, protocol.KindEnd:
			s := fmt.Sprintf("%s %s %s", pe.Conn, pe.Call.Method, pe.Call.Outcome)
			if pe.Status != 0 {
				s += fmt.Sprintf(" (HTTP %d)", pe.Status)
			}
			ends = append(ends, s)
		}
	}}
	res, err := replay.ReplayFile(context.Background(), path, delivery.Options(&replay.Options{Engine: &replay.EngineOptions{Tap: tap}}))
	if err != nil {
		t.Fatal(err)
	}
	return res, ends, requests
}

// TestMCPOverHTTPConformance: two provider processes' MCP clients each open
// with server/discover id 1, which the server answers HTTP 400 with no
// body, then initialize with id 1 again, and call a tool answered with
// server-sent events, all recorded through the real proxy: the plain
// recording passes protocol-conformance (id 1 is not reused: each request
// before a session is its own exchange's, and the 400 ended its call as an
// HTTP error), and each call is timed from its request. The same with a real
// reuse, a second tools/call with the id of one still in flight in the same
// session, fails id-not-reused.
func TestMCPOverHTTPConformance(t *testing.T) {
	t.Run("two clients, each opening with id 1", func(t *testing.T) {
		path := recordMCP(t, func(ctx context.Context, proxyURL string, up *mcpUpstream) {
			a, b := &mcpClient{t: t, url: proxyURL}, &mcpClient{t: t, url: proxyURL}
			a.open(ctx)
			b.open(ctx)
			for _, c := range []*mcpClient{a, b} {
				if status, body := c.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delegate_task"}}`); status != http.StatusOK || !strings.Contains(body, `"result"`) {
					t.Errorf("tools/call answered %d: %q", status, body)
				}
			}
		})
		res, ends, requests := mcpCalls(t, path)
		if res.Verdict.Status != assert.StatusPassed || len(res.Verdict.Suites) != 1 || res.Verdict.Suites[0].Status != assert.StatusPassed {
			t.Fatalf("verdict %+v (failure %+v), want protocol-conformance passed", res.Verdict, res.Verdict.Failure)
		}
		want := []string{
			"server/discover failure (HTTP 400)", "initialize success",
			"server/discover failure (HTTP 400)", "initialize success",
			"tools/call success", "tools/call success",
		}
		var got []string
		for _, e := range ends {
			_, rest, _ := strings.Cut(e, " ")
			got = append(got, rest)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("JSON-RPC calls ended:\n%s\nwant:\n%s", strings.Join(ends, "\n"), strings.Join(want, "\n"))
		}
		// Timed from the request: the request event is its body's, before
		// the response began.
		content, err := bundle.ReadFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"server/discover", "initialize", "tools/call"} {
			pe := requests[m]
			if pe == nil {
				t.Fatalf("no %s request decoded", m)
			}
			var at *bundle.Event
			for i := range content.Events {
				if content.Events[i].Seq == pe.Seq {
					at = &content.Events[i]
				}
			}
			if at == nil || at.Kind != bundle.KindHTTPBody || at.Dir != bundle.DirClientToServer || !bytes.Contains(at.Body.Data, []byte(m)) {
				t.Errorf("%s request decoded at seq %d (%+v), want its request body's event", m, pe.Seq, at)
			}
		}
	})
	t.Run("a real reuse in flight", func(t *testing.T) {
		path := recordMCP(t, func(ctx context.Context, proxyURL string, up *mcpUpstream) {
			a := &mcpClient{t: t, url: proxyURL}
			a.open(ctx)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				a2 := &mcpClient{t: t, url: proxyURL, session: a.session}
				a2.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{"hold":true}}}`)
			}()
			select {
			case <-up.held: // the first call is in flight
			case <-ctx.Done():
				t.Fatal("the held call never reached the server")
			}
			a.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`)
			close(up.release)
			wg.Wait()
		})
		res, _, _ := mcpCalls(t, path)
		f := res.Verdict.Failure
		if res.Verdict.Status != assert.StatusFailed || f == nil || f.Check != assert.CheckIDNotReused {
			t.Fatalf("verdict %+v (failure %+v), want id-not-reused failed", res.Verdict, f)
		}
		if !strings.Contains(f.Seen, "tools/call") || !strings.Contains(f.Seen, "reuses id 2") {
			t.Errorf("failure seen %q, want the tools/call reusing id 2", f.Seen)
		}
	})
	t.Run("DELETE after the server stopped", func(t *testing.T) {
		path := recordMCPStopping(t, func(ctx context.Context, proxyURL string, up *mcpUpstream, stop func()) {
			a := &mcpClient{t: t, url: proxyURL}
			a.open(ctx)
			stop() // the server is gone: its port refuses
			req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, proxyURL+"/mcp", nil)
			req.Header.Set("Mcp-Session-Id", a.session)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusBadGateway {
				t.Errorf("DELETE through the proxy answered %d, want 502 (the upstream refused)", res.StatusCode)
			}
		})
		var got []string
		tap := &replay.Tap{Protocol: func(pe *protocol.Event) {
			if pe.Protocol == protocol.HTTP && pe.Call != nil && pe.Call.Method == "DELETE /mcp" && pe.Kind != protocol.KindRequest {
				got = append(got, fmt.Sprintf("%s %s %s", pe.Kind, pe.Call.Outcome, pe.Why))
			}
		}}
		res, err := replay.ReplayFile(context.Background(), path, delivery.Options(&replay.Options{Engine: &replay.EngineOptions{Tap: tap}}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict.Status != assert.StatusPassed {
			t.Errorf("verdict %+v (failure %+v), want passed", res.Verdict, res.Verdict.Failure)
		}
		// Not a failed call: an exchange that got no HTTP response, saying why.
		if len(got) != 1 || !strings.HasPrefix(got[0], "end unknown no HTTP response: upstream: ") || !strings.Contains(got[0], "connection refused") {
			t.Errorf("the DELETE ended as %q, want one end with outcome unknown: no HTTP response: upstream: ... connection refused", got)
		}
	})
}
