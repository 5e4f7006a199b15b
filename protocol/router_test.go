package protocol_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
)

// routerFeed feeds a Router of the JSON-RPC and HTTP routes, numbering the
// events, and counts the protocol events by kind.
type routerFeed struct {
	r     *protocol.Router
	seq   uint64
	kinds map[protocol.Kind]int
	maxC  int // the most entries the router held at once
}

func newRouterFeed() *routerFeed {
	f := &routerFeed{kinds: map[protocol.Kind]int{}}
	routes := append(protocol.JSONRPCRoutes(protocol.NewJSONRPCDecoder()), protocol.HTTPRoute(protocol.NewHTTPDecoder(nil)))
	f.r = protocol.NewRouter(routes, func(ev *protocol.Event) { f.kinds[ev.Kind]++ })
	return f
}

func (f *routerFeed) feed(ev bundle.Event) {
	f.seq++
	ev.Seq, ev.T = f.seq, int64(f.seq)
	f.r.Feed(&ev)
	f.maxC = max(f.maxC, f.r.Conns())
}

func line(kind bundle.Kind, conn string, dir bundle.Dir, body string) bundle.Event {
	return bundle.Event{Kind: kind, Conn: conn, Dir: dir, Type: bundle.TypeText, Body: bundle.Text([]byte(body))}
}

const (
	req  = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	resp = `{"jsonrpc":"2.0","id":1,"result":{}}`
)

// TestRouterDropsEndedConnections: a long bundle of many short connections
// (WebSockets closed by both sides, dropped or shut down; HTTP exchanges;
// stdio processes that exit) keeps the router's map bounded by the
// connections open at once, and every call is still answered.
func TestRouterDropsEndedConnections(t *testing.T) {
	const n = 3000
	f := newRouterFeed()
	for i := range n {
		ws, h, p := fmt.Sprintf("ws%d", i), fmt.Sprintf("h%d", i), fmt.Sprintf("proc-%d", i)
		f.feed(bundle.Event{Kind: bundle.KindWSOpen, Conn: ws, URL: "/rpc"})
		f.feed(line(bundle.KindWSMessage, ws, bundle.DirClientToServer, req))
		f.feed(line(bundle.KindWSMessage, ws, bundle.DirServerToClient, resp))
		switch i % 3 {
		case 0: // the close handshake
			f.feed(bundle.Event{Kind: bundle.KindWSClose, Conn: ws, Dir: bundle.DirClientToServer, Code: 1000})
			f.feed(bundle.Event{Kind: bundle.KindWSClose, Conn: ws, Dir: bundle.DirServerToClient, Code: 1000})
		case 1: // dropped without a close frame
			f.feed(bundle.Event{Kind: bundle.KindWSClose, Conn: ws, Dir: bundle.DirServerToClient, Code: 1006, Err: "connection reset"})
		case 2: // the recorder's shutdown
			f.feed(bundle.Event{Kind: bundle.KindWSClose, Conn: ws, Code: 1001, Reason: "wireproof is stopping"})
		}
		f.feed(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: h, Method: "GET", URL: "/x"})
		f.feed(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: h, Status: 200})
		f.feed(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: h})
		f.feed(bundle.Event{Kind: bundle.KindProcStart, Conn: p})
		f.feed(line(bundle.KindStdioLine, p, bundle.DirClientToServer, req))
		f.feed(line(bundle.KindStdioLine, p, bundle.DirServerToClient, resp))
		f.feed(bundle.Event{Kind: bundle.KindProcExit, Conn: p})
	}
	if f.maxC > 2 || f.r.Conns() != 0 {
		t.Errorf("the router held up to %d entries, %d at the end; want at most 2 (the connections open at once), 0 at the end", f.maxC, f.r.Conns())
	}
	want := map[protocol.Kind]int{protocol.KindRequest: 3 * n, protocol.KindResponse: 3 * n, protocol.KindClose: n + n/3} // the handshakes have two closes
	if diff := cmp.Diff(want, f.kinds); diff != "" {
		t.Errorf("protocol events by kind (-want +got):\n%s", diff)
	}
}

// TestRouterLateEvents: what is recorded after a connection ended still
// reaches its decoder: a stdout line drained after the process's exit, a
// frame after one side's close (the connection is not over), the second
// close after a drop. A side's close alone keeps the entry.
func TestRouterLateEvents(t *testing.T) {
	f := newRouterFeed()
	f.feed(line(bundle.KindStdioLine, "cmd", bundle.DirClientToServer, req))
	f.feed(bundle.Event{Kind: bundle.KindProcExit, Conn: "cmd"})
	if f.r.Conns() != 0 {
		t.Fatalf("%d entries after the process exited, want 0", f.r.Conns())
	}
	f.feed(line(bundle.KindStdioLine, "cmd", bundle.DirServerToClient, resp)) // drained after the exit
	if f.kinds[protocol.KindResponse] != 1 || f.r.Protocol("cmd") != protocol.JSONRPC {
		t.Errorf("the late line: %v, protocol %q; want a response of the JSON-RPC call", f.kinds, f.r.Protocol("cmd"))
	}

	f.feed(bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/rpc"})
	f.feed(line(bundle.KindWSMessage, "ws1", bundle.DirClientToServer, req))
	f.feed(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000})
	if f.r.Conns() != 1 {
		t.Errorf("%d entries after the client's close, want 1: the server may still answer", f.r.Conns())
	}
	f.feed(line(bundle.KindWSMessage, "ws1", bundle.DirServerToClient, resp))
	f.feed(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1000})
	f.feed(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1006, Err: "late"})
	if f.r.Conns() != 0 || f.kinds[protocol.KindResponse] != 2 || f.kinds[protocol.KindClose] != 3 {
		t.Errorf("after both closes: %d entries, events %v; want 0 entries, 2 responses, 3 closes", f.r.Conns(), f.kinds)
	}
}

// TestRouterSkipsCutMessages: a WebSocket message the recorder marked
// incomplete (its sender died inside it) was never received whole, so it is
// no decode error and no call; the next whole message decodes as usual.
func TestRouterSkipsCutMessages(t *testing.T) {
	f := newRouterFeed()
	f.feed(bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/rpc"})
	f.feed(line(bundle.KindWSMessage, "ws1", bundle.DirClientToServer, req))
	cut := line(bundle.KindWSMessage, "ws1", bundle.DirServerToClient, `{"jsonrpc":"2.0","id":1,"res`)
	cut.Attrs, cut.Err = []byte(`{"incomplete":true}`), "incomplete: the server's stream ended inside this message"
	f.feed(cut)
	f.feed(line(bundle.KindWSMessage, "ws1", bundle.DirServerToClient, resp))
	want := map[protocol.Kind]int{protocol.KindRequest: 1, protocol.KindResponse: 1}
	if diff := cmp.Diff(want, f.kinds); diff != "" {
		t.Errorf("protocol events by kind (-want +got):\n%s", diff)
	}
}
