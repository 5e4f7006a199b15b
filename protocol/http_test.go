package protocol_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
)

// TestHTTPDecoderDropsEndedExchanges: an ended exchange and the MCP scope it
// used are dropped (sessions included, once nothing is in flight), so the
// decoder's memory follows what is open, not the bundle.
func TestHTTPDecoderDropsEndedExchanges(t *testing.T) {
	d := protocol.NewHTTPDecoder(nil)
	emit := func(*protocol.Event) {}
	seq := uint64(0)
	feed := func(ev bundle.Event) {
		seq++
		ev.Seq = seq
		d.Feed(&ev, emit)
	}
	for i := range 200 {
		conn := fmt.Sprintf("h%d", i)
		h := http.Header{"Content-Type": {"application/json"}}
		if i%2 == 1 {
			h.Set("Mcp-Session-Id", fmt.Sprintf("s%d", i))
		}
		feed(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: conn, Method: http.MethodPost, URL: "/mcp", Header: h})
		feed(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`))})
		feed(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: 400})
		feed(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: conn})
	}
	if n := d.Held(); n != 0 {
		t.Errorf("after 200 ended exchanges the decoder holds %d, want 0", n)
	}
}

// FuzzHTTPDecoder: whatever an exchange's bodies hold and however they are
// cut into chunks, the decoder does not panic, every JSON-RPC call it opens
// is ended by the exchange's end or by Stop, and it holds nothing after.
func FuzzHTTPDecoder(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"a"}`, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`, 200, 7, true)
	f.Add(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":"1","method":"b"}]`, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}\r\n\r\ndata: [1\n\n", 200, 3, false)
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, "", "", 400, 1, true)
	f.Add(`{"jsonrpc":"2.0","id":{},"method":"a"}`, "application/json", `{"error":"x"}`, 500, 2, false)
	f.Fuzz(func(t *testing.T, req, ctype, res string, status, cut int, session bool) {
		if cut < 1 || cut > 64 {
			cut = 5
		}
		d := protocol.NewHTTPDecoder(nil)
		open := map[*protocol.Call]bool{}
		emit := func(ev *protocol.Event) {
			if ev.Protocol != protocol.JSONRPC || ev.Call == nil {
				return
			}
			if ev.Kind == protocol.KindRequest {
				open[ev.Call] = true
			}
			if ev.Call.Outcome != protocol.OutcomeOpen {
				delete(open, ev.Call)
			}
		}
		seq := uint64(0)
		feed := func(ev bundle.Event) {
			seq++
			ev.Seq = seq
			d.Feed(&ev, emit)
		}
		for i, conn := range []string{"h1", "h2"} {
			h := http.Header{}
			if session {
				h.Set("Mcp-Session-Id", "s")
			}
			if i == 0 {
				h.Set("Content-Length", fmt.Sprint(len(req)))
			}
			feed(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: conn, Method: http.MethodPost, URL: "/mcp", Header: h})
			for j := 0; j < len(req); j += cut {
				feed(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(req[j:min(j+cut, len(req))]))})
			}
		}
		for _, conn := range []string{"h1", "h2"} {
			feed(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: status, Header: http.Header{"Content-Type": {ctype}}})
			for j := 0; j < len(res); j += cut {
				feed(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(res[j:min(j+cut, len(res))]))})
			}
		}
		feed(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: "h1", Size: int64(len(res))})
		d.Stop(&bundle.Event{Seq: seq + 1}, "the bundle ended", emit) // h2 is still open
		if len(open) != 0 {
			t.Errorf("%d JSON-RPC calls left open after Stop", len(open))
		}
		if n := d.Held(); n != 1 { // h2, stopped, kept for its recorded end
			t.Errorf("after Stop the decoder holds %d, want only the stopped exchange", n)
		}
		feed(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: "h2", Size: int64(len(res))})
		if n := d.Held(); n != 0 {
			t.Errorf("after every end the decoder holds %d, want 0", n)
		}
	})
}
