package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/t3"
)

// echoUpstream is a real WebSocket server that echoes every message, and on
// request closes with a given status ("close:CODE:REASON") or drops the TCP
// connection without a close frame ("die").
type echoUpstream struct {
	*httptest.Server
	mode   websocket.CompressionMode
	closes chan websocket.CloseError // how each client connection ended
}

func startEchoUpstream(t *testing.T, mode websocket.CompressionMode) *echoUpstream {
	t.Helper()
	u := &echoUpstream{mode: mode, closes: make(chan websocket.CloseError, 1000)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("wsTicket") == "spent" {
			http.Error(w, `{"error":"ticket already used"}`, http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: u.mode, Subprotocols: []string{"effect-rpc"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(64 << 20)
		ctx := context.Background()
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				var ce websocket.CloseError
				errors.As(err, &ce)
				u.closes <- ce
				return
			}
			if typ == websocket.MessageText {
				if s := string(b); s == "die" {
					return // CloseNow in the defer: no close frame
				} else if rest, ok := strings.CutPrefix(s, "close:"); ok {
					code, reason, _ := strings.Cut(rest, ":")
					n, _ := strconv.Atoi(code)
					c.Close(websocket.StatusCode(n), reason)
					return
				}
			}
			if err := c.Write(ctx, typ, b); err != nil {
				return
			}
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func dialProxy(t *testing.T, r *recording, path string, opts *websocket.DialOptions) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(r.URL, "http")+path, opts)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	return c
}

func echo(t *testing.T, c *websocket.Conn, typ websocket.MessageType, msg []byte) {
	t.Helper()
	ctx := context.Background()
	if err := c.Write(ctx, typ, msg); err != nil {
		t.Fatal(err)
	}
	gt, got, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gt != typ || !bytes.Equal(got, msg) {
		t.Fatalf("echo of a %d-byte %v message came back as %d bytes %v", len(msg), typ, len(got), gt)
	}
}

func ofKinds(evs []bundle.Event, prefix string) []bundle.Event {
	var out []bundle.Event
	for _, ev := range evs {
		if strings.HasPrefix(string(ev.Kind), prefix) {
			out = append(out, ev)
		}
	}
	return out
}

func TestProxyWebSocketEcho(t *testing.T) {
	testkit.CheckLeaks(t)
	up := startEchoUpstream(t, websocket.CompressionDisabled)
	r := startRecording(t, up.URL, nil)
	c := dialProxy(t, r, "/ws?orchestrationProtocol=2", &websocket.DialOptions{Subprotocols: []string{"effect-rpc"}})
	if c.Subprotocol() != "effect-rpc" {
		t.Errorf("subprotocol = %q, want effect-rpc", c.Subprotocol())
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16)
	msgs := []struct {
		typ  websocket.MessageType
		data []byte
	}{
		{websocket.MessageText, []byte(`{"_tag":"Request","id":"1"}`)},
		{websocket.MessageBinary, allBytes()},
		{websocket.MessageText, big},
	}
	for _, m := range msgs {
		echo(t, c, m.typ, m.data)
	}
	if err := c.Close(websocket.StatusNormalClosure, "done"); err != nil {
		t.Fatal(err)
	}
	if ce := <-up.closes; ce.Code != websocket.StatusNormalClosure || ce.Reason != "done" {
		t.Errorf("upstream saw close %v, want 1000 done", ce)
	}
	r.waitRelays()
	evs := ofKinds(r.stop(), "ws.")
	var want []evView
	want = append(want, evView{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws?orchestrationProtocol=2"})
	for _, m := range msgs {
		typ := bundle.TypeText
		if m.typ == websocket.MessageBinary {
			typ = bundle.TypeBinary
		}
		for _, dir := range []bundle.Dir{bundle.DirClientToServer, bundle.DirServerToClient} {
			want = append(want, evView{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: dir, Type: typ, Body: string(m.data)})
		}
	}
	want = append(want,
		evView{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000, Reason: "done"},
		evView{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1000, Reason: "done"})
	if diff := cmp.Diff(want, evViews(evs)); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
	if len(evs) > 0 && evs[0].Name != "effect-rpc" {
		t.Errorf("ws.open name = %q, want the negotiated subprotocol", evs[0].Name)
	}
}

// TestProxyWebSocketCloses closes connections with coder/websocket on both
// ends: each side's close frame is recorded with its direction, and each
// side gets the other's code.
func TestProxyWebSocketCloses(t *testing.T) {
	for _, c := range []struct {
		name       string
		act        func(t *testing.T, c *websocket.Conn) error // what the client does; returns the client's final read error
		clientSees websocket.StatusCode
		upSees     websocket.StatusCode
		want       []evView
	}{
		{
			name: "client closes",
			act: func(t *testing.T, c *websocket.Conn) error {
				return c.Close(4001, "client bye")
			},
			upSees: 4001,
			want: []evView{
				{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 4001, Reason: "client bye"},
				{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 4001, Reason: "client bye"},
			},
		},
		{
			name: "upstream closes",
			act: func(t *testing.T, c *websocket.Conn) error {
				c.Write(context.Background(), websocket.MessageText, []byte("close:4002:server bye"))
				_, _, err := c.Read(context.Background())
				return err
			},
			clientSees: 4002,
			want: []evView{
				{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 4002, Reason: "server bye"},
				{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 4002, Reason: "server bye"},
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			testkit.CheckLeaks(t)
			up := startEchoUpstream(t, websocket.CompressionDisabled)
			r := startRecording(t, up.URL, nil)
			conn := dialProxy(t, r, "/ws", nil)
			defer conn.CloseNow()
			err := c.act(t, conn)
			if c.clientSees != 0 {
				if got := websocket.CloseStatus(err); got != c.clientSees {
					t.Errorf("client saw %v (status %v), want status %v", err, got, c.clientSees)
				}
			} else if err != nil {
				t.Errorf("client close: %v", err)
			}
			if c.upSees != 0 {
				if ce := <-up.closes; ce.Code != c.upSees {
					t.Errorf("upstream saw close %v, want %v", ce, c.upSees)
				}
			}
			r.waitRelays()
			closes := evViews(ofKinds(r.stop(), "ws.close"))
			if diff := cmp.Diff(c.want, closes); diff != "" {
				t.Errorf("recorded closes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProxyWebSocketCompression(t *testing.T) {
	msg := []byte(strings.Repeat(`{"type":"thread.message","text":"hello"},`, 100))
	for _, c := range []struct {
		name         string
		clientMode   websocket.CompressionMode
		upstreamMode websocket.CompressionMode
		want         string
	}{
		// The two ends negotiate with each other: an upstream that does not
		// compress leaves the client uncompressed too.
		{"client side only", websocket.CompressionContextTakeover, websocket.CompressionDisabled, `{"clientCompressed":false,"upstreamCompressed":false}`},
		{"both sides", websocket.CompressionContextTakeover, websocket.CompressionContextTakeover, `{"clientCompressed":true,"upstreamCompressed":true,"extensions":"permessage-deflate"}`},
		{"no context takeover", websocket.CompressionNoContextTakeover, websocket.CompressionNoContextTakeover,
			`{"clientCompressed":true,"upstreamCompressed":true,"extensions":"permessage-deflate; client_no_context_takeover; server_no_context_takeover"}`},
		{"neither", websocket.CompressionDisabled, websocket.CompressionContextTakeover, `{"clientCompressed":false,"upstreamCompressed":false}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			testkit.CheckLeaks(t)
			up := startEchoUpstream(t, c.upstreamMode)
			r := startRecording(t, up.URL, nil)
			conn := dialProxy(t, r, "/ws", &websocket.DialOptions{CompressionMode: c.clientMode})
			for range 3 {
				echo(t, conn, websocket.MessageText, msg)
			}
			conn.Close(websocket.StatusNormalClosure, "")
			<-up.closes
			evs := r.stop()
			opens := ofKinds(evs, "ws.open")
			if len(opens) != 1 {
				t.Fatalf("%d ws.open events, want 1", len(opens))
			}
			if diff := cmp.Diff(c.want, string(opens[0].Attrs)); diff != "" {
				t.Errorf("ws.open attrs (-want +got):\n%s", diff)
			}
			msgs := ofKinds(evs, "ws.message")
			if len(msgs) != 6 {
				t.Fatalf("%d messages recorded, want 6", len(msgs))
			}
			for _, ev := range msgs {
				if !bytes.Equal(ev.Body.Data, msg) {
					t.Errorf("recorded %s message is %q..., want the decompressed message", ev.Dir, trimForLog(ev.Body.Data))
				}
			}
		})
	}
}

// echoClients runs client(0..n-1) at once, each on connections of its own
// to the echo upstream up through the proxy, fails the test on the first
// error, and waits until up has seen n connections end.
func echoClients(t *testing.T, up *echoUpstream, n int, client func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() { errs <- client(i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		<-up.closes
	}
}

func TestProxyWebSocketConcurrent(t *testing.T) {
	testkit.CheckLeaks(t)
	up := startEchoUpstream(t, websocket.CompressionDisabled)
	r := startRecording(t, up.URL, nil)
	const conns, each = 200, 50
	echoClients(t, up, conns, func(i int) error {
		ctx := context.Background()
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(r.URL, "http")+"/ws", nil)
		if err != nil {
			return err
		}
		defer c.CloseNow()
		for j := range each {
			msg := fmt.Appendf(nil, `{"client":%d,"n":%d}`, i, j)
			if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
				return err
			}
			if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, msg) {
				return fmt.Errorf("client %d message %d: got %q, %v", i, j, got, err)
			}
		}
		return c.Close(websocket.StatusNormalClosure, "")
	})
	type key struct {
		conn string
		dir  bundle.Dir
	}
	seen := map[key][]int{}
	client := map[string]int{}
	for _, ev := range ofKinds(r.stop(), "ws.message") {
		var m struct{ Client, N int }
		if err := json.Unmarshal(ev.Body.Data, &m); err != nil {
			t.Fatalf("seq %d: %v", ev.Seq, err)
		}
		if c, ok := client[ev.Conn]; ok && c != m.Client {
			t.Fatalf("conn %s carries messages of clients %d and %d", ev.Conn, c, m.Client)
		}
		client[ev.Conn] = m.Client
		k := key{ev.Conn, ev.Dir}
		seen[k] = append(seen[k], m.N)
	}
	want := make([]int, each)
	for i := range want {
		want[i] = i
	}
	if len(seen) != 2*conns {
		t.Errorf("%d connection directions recorded, want %d", len(seen), 2*conns)
	}
	for k, got := range seen {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s messages (-want +got):\n%s", k.conn, k.dir, diff)
		}
	}
}

func TestProxyWebSocketRefused(t *testing.T) {
	testkit.CheckLeaks(t)
	up := startEchoUpstream(t, websocket.CompressionDisabled)
	r := startRecording(t, up.URL, &Options{TokenFields: t3.TokenFields})
	_, res, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(r.URL, "http")+"/ws?wsTicket=spent", nil)
	if err == nil {
		t.Fatal("dial with a spent ticket succeeded")
	}
	if res == nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial response %v, want the upstream's 401", res)
	}
	want := []evView{
		{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/ws?wsTicket=[REDACTED]"},
		{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 401},
		{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: "{\"error\":\"ticket already used\"}\n"},
		{Kind: bundle.KindHTTPEnd, Conn: "h1", Size: 32, Err: true},
	}
	if diff := cmp.Diff(want, evViews(r.stop())); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func TestProxyCloseEndsWebSockets(t *testing.T) {
	testkit.CheckLeaks(t)
	up := startEchoUpstream(t, websocket.CompressionDisabled)
	r := startRecording(t, up.URL, nil)
	c := dialProxy(t, r, "/ws", nil)
	defer c.CloseNow()
	echo(t, c, websocket.MessageText, []byte("hi"))
	read := make(chan error, 1)
	go func() {
		_, _, err := c.Read(context.Background())
		read <- err
	}()
	evs := r.stop()
	if got := websocket.CloseStatus(<-read); got != websocket.StatusGoingAway {
		t.Errorf("client saw status %v, want 1001", got)
	}
	if ce := <-up.closes; ce.Code != websocket.StatusGoingAway {
		t.Errorf("upstream saw %v, want 1001", ce)
	}
	closes := evViews(ofKinds(evs, "ws.close"))
	want := []evView{{Kind: bundle.KindWSClose, Conn: "ws1", Code: 1001, Reason: "wireproof: recording stopped"}}
	if diff := cmp.Diff(want, closes); diff != "" {
		t.Errorf("recorded closes (-want +got):\n%s", diff)
	}
}
