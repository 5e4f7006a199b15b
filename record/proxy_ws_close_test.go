package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/internal/wsframe"
)

// waitRelays waits until the proxy relays no WebSocket connection: both ends
// of every connection have closed theirs.
func (r *recording) waitRelays() {
	for {
		r.srv.proxy.mu.Lock()
		n := len(r.srv.proxy.relays)
		r.srv.proxy.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// startRecordingWith is startRecording with proxy options.
func startRecordingWith(t *testing.T, upstream string, opts *Options, popts ProxyOptions) *recording {
	t.Helper()
	rec, path := newFileRecorder(t, opts)
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	popts.Upstream = u
	p, err := NewProxy(rec, &popts)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Listen(context.Background(), "", p)
	if err != nil {
		t.Fatal(err)
	}
	r := &recording{t: t, rec: rec, srv: srv, path: path, URL: srv.URL}
	t.Cleanup(func() { r.stop() })
	return r
}

func wsEvents(evs []bundle.Event) []evView {
	return evViews(ofKinds(evs, "ws."))
}

// TestProxyWebSocketCloseHandshake is the close handshake end to end with
// peers that go on talking after the other side's close frame, as Node's ws
// does for an Effect RPC server answering a client's final Interrupt: what
// they send is relayed and recorded until their own close frame, and each
// side gets the other's code and reason.
func TestProxyWebSocketCloseHandshake(t *testing.T) {
	t.Run("client closes, upstream answers then closes", func(t *testing.T) {
		testkit.CheckLeaks(t)
		got := make(chan []string, 1)
		up := startRawUpstream(t, func(p *rawPeer) {
			var seen []string
			for {
				f, err := p.next()
				if err != nil {
					break
				}
				seen = append(seen, f.String())
				if f.op == wsframe.OpClose {
					p.send(t, text(`{"_tag":"Exit","requestId":"7","exit":{"_tag":"Failure"}}`), closing(4005, "interrupted"))
					break
				}
			}
			got <- seen
		})
		r := startRecording(t, up.URL, nil)
		c := rawDial(t, r.URL, "/ws")
		c.send(t, text(`{"_tag":"Interrupt","requestId":"7"}`), closing(1000, "bye"))
		frames, err := c.frames()
		if !errors.Is(err, io.EOF) {
			t.Errorf("client's connection ended with %v, want EOF", err)
		}
		wantClient := []string{`text {"_tag":"Exit","requestId":"7","exit":{"_tag":"Failure"}}`, "close 4005 interrupted"}
		if diff := cmp.Diff(wantClient, frames); diff != "" {
			t.Errorf("client received (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{`text {"_tag":"Interrupt","requestId":"7"}`, "close 1000 bye"}, <-got); diff != "" {
			t.Errorf("upstream received (-want +got):\n%s", diff)
		}
		c.conn.Close()
		r.waitRelays()
		want := []evView{
			{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
			{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText, Body: `{"_tag":"Interrupt","requestId":"7"}`},
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000, Reason: "bye"},
			{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeText, Body: `{"_tag":"Exit","requestId":"7","exit":{"_tag":"Failure"}}`},
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 4005, Reason: "interrupted"},
		}
		if diff := cmp.Diff(want, wsEvents(r.stop())); diff != "" {
			t.Errorf("recorded (-want +got):\n%s", diff)
		}
	})
	t.Run("upstream closes, client still sends", func(t *testing.T) {
		testkit.CheckLeaks(t)
		got := make(chan []string, 1)
		up := startRawUpstream(t, func(p *rawPeer) {
			p.send(t, closing(4002, "server bye"))
			var seen []string
			for {
				f, err := p.next()
				if err != nil {
					break
				}
				seen = append(seen, f.String())
				if f.op == wsframe.OpClose {
					break
				}
			}
			got <- seen
		})
		r := startRecording(t, up.URL, nil)
		c := rawDial(t, r.URL, "/ws")
		if f, err := c.next(); err != nil || f.String() != "close 4002 server bye" {
			t.Fatalf("client's first frame: %v, %v; want the upstream's close", f, err)
		}
		c.send(t, text("late"), closing(1000, "ok"))
		if diff := cmp.Diff([]string{"text late", "close 1000 ok"}, <-got); diff != "" {
			t.Errorf("upstream received (-want +got):\n%s", diff)
		}
		if f, err := c.next(); !errors.Is(err, io.EOF) {
			t.Errorf("client read %v, %v after the handshake, want EOF", f, err)
		}
		c.conn.Close()
		r.waitRelays()
		want := []evView{
			{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 4002, Reason: "server bye"},
			{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText, Body: "late"},
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000, Reason: "ok"},
		}
		if diff := cmp.Diff(want, wsEvents(r.stop())); diff != "" {
			t.Errorf("recorded (-want +got):\n%s", diff)
		}
	})
	t.Run("coder client gets the upstream's code", func(t *testing.T) {
		testkit.CheckLeaks(t)
		up := startRawUpstream(t, func(p *rawPeer) {
			for {
				f, err := p.next()
				if err != nil || f.op == wsframe.OpClose {
					break
				}
			}
			p.send(t, text("last words"), closing(4005, "interrupted"))
		})
		r := startRecording(t, up.URL, nil)
		c := dialProxy(t, r, "/ws", nil)
		err := c.Close(websocket.StatusNormalClosure, "bye")
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 4005 || ce.Reason != "interrupted" {
			t.Errorf("client's Close returned %v, want the upstream's 4005 interrupted", err)
		}
		r.waitRelays()
		want := []evView{
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000, Reason: "bye"},
			{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeText, Body: "last words"},
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 4005, Reason: "interrupted"},
		}
		if diff := cmp.Diff(want, wsEvents(r.stop())[1:]); diff != "" {
			t.Errorf("recorded (-want +got):\n%s", diff)
		}
	})
}

// TestProxyWebSocketAbnormalEnds: a side whose connection ends without a
// close frame is recorded as such (1006, with why), and the other side sees
// its connection end the same way, not a close the proxy made up.
func TestProxyWebSocketAbnormalEnds(t *testing.T) {
	t.Run("upstream drops its connection", func(t *testing.T) {
		testkit.CheckLeaks(t)
		up := startEchoUpstream(t, websocket.CompressionDisabled)
		r := startRecording(t, up.URL, nil)
		c := dialProxy(t, r, "/ws", nil)
		defer c.CloseNow()
		c.Write(context.Background(), websocket.MessageText, []byte("die"))
		_, _, err := c.Read(context.Background())
		if websocket.CloseStatus(err) != -1 || !errors.Is(err, io.EOF) {
			t.Errorf("client read %v, want the connection's end (EOF) and no close frame", err)
		}
		r.waitRelays()
		want := []evView{{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1006, Err: true}}
		evs := ofKinds(r.stop(), "ws.close")
		if diff := cmp.Diff(want, evViews(evs)); diff != "" {
			t.Errorf("recorded closes (-want +got):\n%s", diff)
		}
		if len(evs) == 1 && evs[0].Err != "EOF" {
			t.Errorf("recorded err %q, want EOF", evs[0].Err)
		}
	})
	t.Run("upstream resets its connection", func(t *testing.T) {
		testkit.CheckLeaks(t)
		up := startRawUpstream(t, func(p *rawPeer) {
			p.next()
			p.conn.(*net.TCPConn).SetLinger(0)
		})
		r := startRecording(t, up.URL, nil)
		c := dialProxy(t, r, "/ws", nil)
		defer c.CloseNow()
		c.Write(context.Background(), websocket.MessageText, []byte("hello"))
		_, _, err := c.Read(context.Background())
		if !errors.Is(err, errConnReset) {
			t.Errorf("client read %v, want a connection reset", err)
		}
		r.waitRelays()
		evs := ofKinds(r.stop(), "ws.close")
		want := []evView{{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1006, Err: true}}
		if diff := cmp.Diff(want, evViews(evs)); diff != "" {
			t.Errorf("recorded closes (-want +got):\n%s", diff)
		}
		if len(evs) == 1 && evs[0].Err != "connection reset by peer" {
			t.Errorf("recorded err %q, want a reset", evs[0].Err)
		}
	})
	t.Run("client vanishes", func(t *testing.T) {
		testkit.CheckLeaks(t)
		up := startEchoUpstream(t, websocket.CompressionDisabled)
		r := startRecording(t, up.URL, nil)
		c := rawDial(t, r.URL, "/ws")
		c.send(t, text("hi"))
		if f, err := c.next(); err != nil || f.String() != "text hi" {
			t.Fatalf("echo: %v, %v", f, err)
		}
		c.conn.Close()
		if ce := <-up.closes; ce.Code != 0 {
			t.Errorf("upstream saw close %v, want its connection's end without a close frame", ce)
		}
		r.waitRelays()
		want := []evView{
			{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
			{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText, Body: "hi"},
			{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeText, Body: "hi"},
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1006, Err: true},
		}
		if diff := cmp.Diff(want, wsEvents(r.stop())); diff != "" {
			t.Errorf("recorded (-want +got):\n%s", diff)
		}
	})
}

// TestProxyWebSocketPings: pings are relayed with their payloads, the pong
// comes from the real peer (the proxy answers none), and both are recorded.
func TestProxyWebSocketPings(t *testing.T) {
	t.Run("upstream pings the client", func(t *testing.T) {
		testkit.CheckLeaks(t)
		got := make(chan []string, 1)
		up := startRawUpstream(t, func(p *rawPeer) {
			p.send(t, rawFrame{op: wsframe.OpPing, fin: true, payload: "hb-1"})
			var seen []string
			for {
				f, err := p.next()
				if err != nil {
					break
				}
				seen = append(seen, f.String())
				if f.op == wsframe.OpPong {
					p.send(t, text("after"))
				}
				if f.op == wsframe.OpClose {
					p.send(t, closing(1000, ""))
					break
				}
			}
			got <- seen
		})
		r := startRecording(t, up.URL, nil)
		pinged := make(chan string, 10)
		c := dialProxy(t, r, "/ws", &websocket.DialOptions{OnPingReceived: func(_ context.Context, p []byte) bool {
			pinged <- string(p)
			return true // and let coder/websocket answer it, as a client does
		}})
		defer c.CloseNow()
		if _, b, err := c.Read(context.Background()); err != nil || string(b) != "after" {
			t.Fatalf("client read %q, %v", b, err)
		}
		c.Close(websocket.StatusNormalClosure, "")
		close(pinged)
		var pings []string
		for p := range pinged {
			pings = append(pings, p)
		}
		if diff := cmp.Diff([]string{"hb-1"}, pings); diff != "" {
			t.Errorf("pings the client received (-want +got):\n%s", diff)
		}
		// One pong, the client's: a proxy that answered too would show two.
		if diff := cmp.Diff([]string{"pong hb-1", "close 1000"}, <-got); diff != "" {
			t.Errorf("upstream received (-want +got):\n%s", diff)
		}
		r.waitRelays()
		want := []evView{
			{Kind: bundle.KindWSPing, Conn: "ws1", Dir: bundle.DirServerToClient, Body: "hb-1"},
			{Kind: bundle.KindWSPong, Conn: "ws1", Dir: bundle.DirClientToServer, Body: "hb-1"},
			{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeText, Body: "after"},
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000},
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1000},
		}
		if diff := cmp.Diff(want, wsEvents(r.stop())[1:]); diff != "" {
			t.Errorf("recorded (-want +got):\n%s", diff)
		}
	})
	t.Run("client pings the upstream", func(t *testing.T) {
		testkit.CheckLeaks(t)
		pinged := make(chan string, 10)
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OnPingReceived: func(_ context.Context, p []byte) bool {
				pinged <- string(p)
				return true
			}})
			if err != nil {
				return
			}
			defer c.CloseNow()
			for {
				if _, _, err := c.Read(context.Background()); err != nil {
					return
				}
			}
		}))
		defer up.Close()
		r := startRecording(t, up.URL, nil)
		c := dialProxy(t, r, "/ws", nil)
		defer c.CloseNow()
		ctx := c.CloseRead(context.Background())
		if err := c.Ping(ctx); err != nil {
			t.Fatalf("ping: %v", err)
		}
		c.Close(websocket.StatusNormalClosure, "")
		r.waitRelays()
		evs := wsEvents(r.stop())
		if len(evs) < 3 || evs[1].Kind != bundle.KindWSPing || evs[2].Kind != bundle.KindWSPong {
			t.Fatalf("recorded %+v, want a ping and its pong after ws.open", evs)
		}
		sent := <-pinged
		want := []evView{
			{Kind: bundle.KindWSPing, Conn: "ws1", Dir: bundle.DirClientToServer, Body: sent},
			{Kind: bundle.KindWSPong, Conn: "ws1", Dir: bundle.DirServerToClient, Body: sent},
		}
		if diff := cmp.Diff(want, evs[1:3]); diff != "" {
			t.Errorf("recorded ping and pong (-want +got):\n%s", diff)
		}
	})
}

// TestProxyWebSocketFrames: a fragmented message with a ping between its
// fragments is recorded as one message, the ping on its own; a message over
// the proxy's MaxMessageSize is relayed whole and recorded cut, with its size.
func TestProxyWebSocketFrames(t *testing.T) {
	testkit.CheckLeaks(t)
	up := startEchoUpstream(t, websocket.CompressionDisabled)
	r := startRecordingWith(t, up.URL, nil, ProxyOptions{MaxMessageSize: 1000})
	c := rawDial(t, r.URL, "/ws")
	c.send(t,
		rawFrame{op: wsframe.OpText, payload: "hel"},
		rawFrame{op: wsframe.OpPing, fin: true, payload: "p"},
		rawFrame{op: wsframe.OpContinuation, fin: true, payload: "lo"})
	big := strings.Repeat("0123456789", 300)
	c.send(t, rawFrame{op: wsframe.OpBinary, fin: true, payload: big}, closing(1000, ""))
	frames, _ := c.frames()
	want := []string{"pong p", "text hello", "binary " + big, "close 1000"}
	if diff := cmp.Diff(want, frames); diff != "" {
		t.Errorf("client received (-want +got):\n%s", diff)
	}
	c.conn.Close()
	r.waitRelays()
	got := wsEvents(r.stop())
	// The upstream's frames interleave with the client's in an order the
	// test does not control; each direction's order is fixed: the client's
	// ping, message, cut message and close, and the upstream's pong, echoes
	// and close.
	for _, d := range []bundle.Dir{bundle.DirClientToServer, bundle.DirServerToClient} {
		ctl := bundle.KindWSPing
		if d == bundle.DirServerToClient {
			ctl = bundle.KindWSPong
		}
		want := []evView{
			{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
			{Kind: ctl, Conn: "ws1", Dir: d, Body: "p"},
			{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: d, Type: bundle.TypeText, Body: "hello"},
			{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: d, Type: bundle.TypeBinary, Body: big[:1000], Truncated: true, Size: 3000},
			{Kind: bundle.KindWSClose, Conn: "ws1", Dir: d, Code: 1000},
		}
		if diff := cmp.Diff(want, onlyDir(got, d)); diff != "" {
			t.Errorf("recorded %s (-want +got):\n%s", d, diff)
		}
	}
}

func onlyDir(evs []evView, d bundle.Dir) []evView {
	var out []evView
	for _, ev := range evs {
		if ev.Dir == d || ev.Dir == "" {
			out = append(out, ev)
		}
	}
	return out
}

// TestProxyWebSocketNotAFrame: bytes that are not a frame are relayed (the
// upstream fails the connection as it would without the proxy) and recorded
// as ws.error; the upstream's 1002 close reaches the client.
func TestProxyWebSocketNotAFrame(t *testing.T) {
	testkit.CheckLeaks(t)
	up := startEchoUpstream(t, websocket.CompressionDisabled)
	r := startRecording(t, up.URL, nil)
	c := rawDial(t, r.URL, "/ws")
	c.send(t, rawFrame{op: 0x3, fin: true, payload: "?"})
	f, err := c.next()
	if err != nil || f.op != wsframe.OpClose || !strings.HasPrefix(f.String(), "close 1002") {
		t.Errorf("client got %v, %v; want the upstream's 1002 close", f, err)
	}
	c.conn.Close()
	<-up.closes
	r.waitRelays()
	got := wsEvents(r.stop())
	want := []evView{
		{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
		{Kind: bundle.KindWSError, Conn: "ws1", Dir: bundle.DirClientToServer, Err: true},
		{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1002, Reason: got[len(got)-2].Reason},
		{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1006, Err: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

// TestProxyWebSocketBigMessage relays a message of the proxy's default limit
// (64 MiB) each way, compressed and not, and records it whole. Under the race
// detector, which makes it minutes long, the message is 8 MiB: still past
// the size from which a message is big (wsBig).
func TestProxyWebSocketBigMessage(t *testing.T) {
	size := DefaultMaxMessageSize
	if raceEnabled {
		size = 2 * wsBig
	}
	for name, mode := range map[string]websocket.CompressionMode{"plain": websocket.CompressionDisabled, "compressed": websocket.CompressionContextTakeover} {
		t.Run(name, func(t *testing.T) {
			testkit.CheckLeaks(t)
			up := startEchoUpstream(t, mode)
			r := startRecording(t, up.URL, nil)
			c := dialProxy(t, r, "/ws", &websocket.DialOptions{CompressionMode: mode})
			msg := bytes.Repeat([]byte("0123456789abcdef"), size/16)
			echo(t, c, websocket.MessageBinary, msg)
			c.Close(websocket.StatusNormalClosure, "")
			<-up.closes
			r.waitRelays()
			msgs := ofKinds(r.stop(), "ws.message")
			if len(msgs) != 2 {
				t.Fatalf("%d messages recorded, want 2", len(msgs))
			}
			for _, ev := range msgs {
				if !bytes.Equal(ev.Body.Data, msg) || ev.Truncated {
					t.Errorf("%s message recorded as %d bytes (truncated %v), want the whole %d", ev.Dir, len(ev.Body.Data), ev.Truncated, len(msg))
				}
			}
		})
	}
}

// TestProxyWebSocketBigMessagesReuse sends a run of different big JSON
// messages each way, with small ones between them, back to back: big
// messages' buffers are reused from one message to the next and the bundle
// writer takes a big JSON body without copying it, so each recorded message
// must still be exactly the one sent, none overwritten by a later one.
func TestProxyWebSocketBigMessagesReuse(t *testing.T) {
	size := wsBig + wsBig/2
	testkit.CheckLeaks(t)
	up := startEchoUpstream(t, websocket.CompressionDisabled)
	r := startRecording(t, up.URL, nil)
	c := dialProxy(t, r, "/ws", nil)
	maps0, mapped0 := bigMaps.Load(), bigMapped.Load()
	var sent [][]byte
	for i := range 6 {
		item := fmt.Sprintf(`{"n":%d,"pad":"%s"},`, i, strings.Repeat(string(rune('a'+i)), 40))
		sent = append(sent, []byte(`{"items":[`+strings.Repeat(item, size/len(item))+`{}]}`), fmt.Appendf(nil, `{"small":%d}`, i))
	}
	ctx := context.Background()
	echoed := make(chan error, 1)
	go func() {
		for _, want := range sent {
			_, got, err := c.Read(ctx)
			if err == nil && !bytes.Equal(got, want) {
				err = fmt.Errorf("echo of a %d-byte message came back as %d bytes", len(want), len(got))
			}
			if err != nil {
				echoed <- err
				return
			}
		}
		echoed <- nil
	}()
	for _, msg := range sent {
		if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-echoed; err != nil {
		t.Fatal(err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	<-up.closes
	r.waitRelays()
	t.Logf("big buffers mapped: %d", bigMaps.Load()-maps0)
	// The connection's twelve big messages were held in at most bigSlots
	// buffers (outside the heap where mapBig can map), every one of them
	// given back when the connection ended.
	if n := bigMaps.Load() - maps0; n > bigSlots || (runtime.GOOS == "linux" && !r.rec.Retains() && n == 0) {
		t.Errorf("%d big buffers mapped for the connection, want 1 to %d", n, bigSlots)
	}
	if n := bigMapped.Load() - mapped0; n != 0 {
		t.Errorf("%d big buffers still mapped after the connection ended", n)
	}
	byDir := map[bundle.Dir][]bundle.Event{}
	for _, ev := range ofKinds(r.stop(), "ws.message") {
		byDir[ev.Dir] = append(byDir[ev.Dir], ev)
	}
	for _, dir := range []bundle.Dir{bundle.DirClientToServer, bundle.DirServerToClient} {
		msgs := byDir[dir]
		if len(msgs) != len(sent) {
			t.Errorf("%s: %d messages recorded, want %d", dir, len(msgs), len(sent))
			continue
		}
		for i, ev := range msgs {
			if want := sent[i]; !bytes.Equal(ev.Body.Data, want) || ev.Truncated {
				t.Errorf("%s message %d recorded as %d bytes beginning %.30q, want %d beginning %.30q", dir, i, len(ev.Body.Data), ev.Body.Data, len(want), want)
			}
		}
	}
}
