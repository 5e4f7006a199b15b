package protocol_test

import (
	"fmt"
	"net/http"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
)

// An MCP client's server/discover, answered HTTP 400 with no body, then its
// initialize, on two exchanges of the Streamable HTTP transport: each
// request is its exchange's (no session exists yet), the 400 ends its call
// as an HTTP error, and the initialize is answered by its JSON body.
func ExampleNewHTTPDecoder() {
	d := protocol.NewHTTPDecoder(nil)
	emit := func(ev *protocol.Event) {
		if ev.Protocol != protocol.JSONRPC {
			return
		}
		line := fmt.Sprintf("@%d %s %s %s id %s", ev.Seq, ev.Conn, ev.Kind, ev.Method, ev.ID)
		if ev.Call != nil && ev.Kind != protocol.KindRequest {
			line += " " + string(ev.Call.Outcome)
		}
		if ev.Err != nil {
			line += ": " + ev.Err.Error()
		}
		fmt.Println(line)
	}
	var seq uint64
	feed := func(ev bundle.Event) {
		seq++
		ev.Seq = seq
		d.Feed(&ev, emit)
	}
	post := func(conn, body string, status int, answer string) {
		feed(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: conn, Method: http.MethodPost, URL: "/mcp",
			Header: http.Header{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(body))}}})
		feed(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(body))})
		feed(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: status, Header: http.Header{"Content-Type": {"application/json"}}})
		if answer != "" {
			feed(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(answer))})
		}
		feed(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: conn, Size: int64(len(answer))})
	}
	post("h1", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, http.StatusBadRequest, "")
	post("h2", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, http.StatusOK, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	// Output:
	// @2 h1 request server/discover id 1
	// @4 h1 response server/discover id 1 failure: HTTP 400 Bad Request without a JSON-RPC response
	// @6 h2 request initialize id 1
	// @9 h2 response initialize id 1 success
}
