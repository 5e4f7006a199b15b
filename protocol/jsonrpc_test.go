package protocol_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
)

// decode feeds lines ("c2s {...}") to a fresh JSON-RPC decoder and describes
// each protocol event on one line.
func decode(lines ...string) []string { return decodeWith(protocol.NewJSONRPCDecoder(), lines...) }

// decodeWith feeds lines ("c2s {...}") to d and describes each protocol
// event on one line.
func decodeWith(d protocol.Decoder, lines ...string) []string {
	var out []string
	emit := func(ev *protocol.Event) {
		s := fmt.Sprintf("%d %s %s id=%s", ev.Seq, ev.Kind, ev.Method, ev.ID)
		if ev.Call != nil {
			s += " call=" + string(ev.Call.Outcome)
		}
		if ev.Reused {
			s += " reused"
		}
		if len(ev.Invalid) > 0 {
			s += " invalid: " + strings.Join(ev.Invalid, "; ")
		}
		if ev.Err != nil {
			s += " err"
		}
		out = append(out, s)
	}
	for i, l := range lines {
		dir, body, _ := strings.Cut(l, " ")
		d.Feed(&bundle.Event{Seq: uint64(i + 1), Kind: bundle.KindStdioLine, Conn: "stdio", Dir: bundle.Dir(dir), Body: bundle.Text([]byte(body))}, emit)
	}
	d.Stop(&bundle.Event{Seq: 99}, "the bundle ended", emit)
	return out
}

func TestJSONRPCDecoder(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"request and result", []string{`c2s {"jsonrpc":"2.0","id":1,"method":"a"}`, `s2c {"jsonrpc":"2.0","id":1,"result":null}`},
			[]string{"1 request a id=1 call=open", "2 response a id=1 call=success"}},
		{"string and number ids differ", []string{`c2s {"jsonrpc":"2.0","id":"1","method":"a"}`, `s2c {"jsonrpc":"2.0","id":1,"result":{}}`},
			[]string{`1 request a id="1" call=open`, "2 response  id=1", `99 end a id="1" call=unknown`}},
		{"string and number ids in flight together", []string{
			`c2s [{"jsonrpc":"2.0","id":"1","method":"a"},{"jsonrpc":"2.0","id":1,"method":"b"},{"jsonrpc":"2.0","method":"n"}]`,
			`s2c [{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":"1","error":{"code":-32000,"message":"no"}},{"jsonrpc":"2.0","id":2,"result":1}]`},
			[]string{`1 request a id="1" call=open`, "1 request b id=1 call=open", "1 notification n id=",
				"2 response b id=1 call=success", `2 response a id="1" call=failure`, "2 response  id=2"}},
		{"error answer", []string{`c2s {"jsonrpc":"2.0","id":7,"method":"a"}`, `s2c {"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}`},
			[]string{"1 request a id=7 call=open", "2 response a id=7 call=failure"}},
		{"notification", []string{`c2s {"jsonrpc":"2.0","method":"n","params":[1]}`}, []string{"1 notification n id="}},
		{"either side may ask", []string{`s2c {"jsonrpc":"2.0","id":1,"method":"sampling"}`, `c2s {"jsonrpc":"2.0","id":1,"result":{}}`},
			[]string{"1 request sampling id=1 call=open", "2 response sampling id=1 call=success"}},
		{"batch", []string{`c2s [{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]`, `s2c [{"jsonrpc":"2.0","id":1,"result":1}]`},
			[]string{"1 request a id=1 call=open", "1 notification n id=", "2 response a id=1 call=success"}},
		{"reused in flight", []string{`c2s {"jsonrpc":"2.0","id":1,"method":"a"}`, `c2s {"jsonrpc":"2.0","id":1,"method":"b"}`},
			[]string{"1 request a id=1 call=open", "2 request b id=1 reused", "99 end a id=1 call=unknown"}},
		{"id reused after its answer", []string{`c2s {"jsonrpc":"2.0","id":1,"method":"a"}`, `s2c {"jsonrpc":"2.0","id":1,"result":1}`, `c2s {"jsonrpc":"2.0","id":1,"method":"b"}`},
			[]string{"1 request a id=1 call=open", "2 response a id=1 call=success", "3 request b id=1 call=open", "99 end b id=1 call=unknown"}},
		{"missing version", []string{`c2s {"id":1,"method":"a"}`},
			[]string{`1 request a id=1 call=open invalid: no "jsonrpc" member (must be "2.0")`, "99 end a id=1 call=unknown"}},
		{"wrong version", []string{`c2s {"jsonrpc":"1.0","method":"a"}`}, []string{`1 notification a id= invalid: "jsonrpc" is "1.0", not "2.0"`}},
		{"object id", []string{`c2s {"jsonrpc":"2.0","id":{},"method":"a"}`},
			[]string{`1 request a id={} call=open invalid: id {} is a object (must be a string, a number or null)`, "99 end a id={} call=unknown"}},
		{"fractional id", []string{`c2s {"jsonrpc":"2.0","id":1.5,"method":"a"}`},
			[]string{`1 request a id=1.5 call=open invalid: id 1.5 has a fractional part (numbers should be integers)`, "99 end a id=1.5 call=unknown"}},
		{"result and error", []string{`c2s {"jsonrpc":"2.0","id":1,"method":"a"}`, `s2c {"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}`},
			[]string{"1 request a id=1 call=open", `2 response a id=1 call=failure invalid: both "result" and "error" (exactly one is allowed)`}},
		{"neither", []string{`s2c {"jsonrpc":"2.0","id":1}`}, []string{`1 response  id=1 invalid: neither "method", "result" nor "error"`}},
		{"bad error object", []string{`s2c {"jsonrpc":"2.0","id":null,"error":{"code":"x"}}`},
			[]string{`1 response  id=null invalid: "error.code" is "x", not an integer; "error.message" is absent, not a string`}},
		{"params not structured", []string{`c2s {"jsonrpc":"2.0","method":"a","params":3}`}, []string{`1 notification a id= invalid: "params" is a number (must be an object or an array)`}},
		{"empty batch", []string{`c2s []`}, []string{"1 notification  id= invalid: an empty batch"}},
		{"not JSON", []string{`c2s {oops`}, []string{"1 decode-error  id= err"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, decode(tt.lines...)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSEMessages(t *testing.T) {
	d := protocol.NewHTTPDecoder(nil)
	var got []string
	emit := func(ev *protocol.Event) {
		switch ev.Kind {
		case protocol.KindNotification:
			got = append(got, ev.Method+": "+string(ev.Body))
		case protocol.KindResponse:
			got = append(got, fmt.Sprintf("end %d declared %d actual %d", ev.Status, ev.Declared, ev.Actual))
		}
	}
	body := "event: progress\ndata: {\"a\":1}\n\n: comment\ndata: line1\r\ndata: line2\r\n\r\ndata: tail\n\n"
	d.Feed(&bundle.Event{Seq: 1, Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/mcp"}, emit)
	d.Feed(&bundle.Event{Seq: 2, Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}}, emit)
	for i := 0; i < len(body); i += 7 { // split anywhere, \r\n pairs included
		d.Feed(&bundle.Event{Seq: 3, Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(body[i:min(i+7, len(body))]))}, emit)
	}
	d.Feed(&bundle.Event{Seq: 4, Kind: bundle.KindHTTPEnd, Conn: "h1", Size: int64(len(body))}, emit)
	want := []string{`progress: {"a":1}`, "message: line1\nline2", "message: tail", fmt.Sprintf("end 200 declared -1 actual %d", len(body))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// FuzzJSONRPC: whatever a line holds, the decoder does not panic, it decodes
// exactly the lines encoding/json accepts (others are decode errors), and
// LooksLikeJSONRPC agrees with encoding/json on what is an object.
func FuzzJSONRPC(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"a"}`, `[{"jsonrpc":"2.0","id":"x","result":1}]`, `{"id":null,"error":{}}`, `[]`, `{`, `"x"`, `{"jsonrpc":"2.0","id":1e3,"method":"a"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		d := protocol.NewJSONRPCDecoder()
		decodeErr := false
		d.Feed(&bundle.Event{Seq: 1, Kind: bundle.KindStdioLine, Conn: "s", Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(line))}, func(ev *protocol.Event) {
			if ev.Kind == protocol.KindDecodeError {
				decodeErr = true
			}
		})
		trimmed := strings.TrimSpace(line)
		if trimmed != "" && decodeErr == json.Valid([]byte(trimmed)) {
			// A valid line may still hold an invalid batch element only if
			// that element is not JSON, which cannot happen in valid JSON.
			t.Errorf("decode error %v for a line encoding/json finds valid=%v: %q", decodeErr, json.Valid([]byte(trimmed)), line)
		}
		if protocol.LooksLikeJSONRPC([]byte(line)) {
			var m map[string]json.RawMessage
			var batch []map[string]json.RawMessage
			if json.Unmarshal([]byte(line), &m) != nil && json.Unmarshal([]byte(line), &batch) != nil {
				t.Errorf("LooksLikeJSONRPC takes %q, which is neither an object nor an array of objects", line)
			}
		}
	})
}

// mcpExchange is one recorded HTTP exchange for the JSON-RPC over HTTP
// tests: the response may be cut before its body (status 0: none at all).
type mcpExchange struct {
	conn, method, session, reqBody string
	status                         int
	ctype, resBody, err            string
}

// feedExchanges feeds exchanges, one after another (or, with overlap, each
// request before the previous one's response), to an HTTP decoder and
// describes its JSON-RPC events.
func feedExchanges(t *testing.T, overlap bool, xs ...mcpExchange) []string {
	t.Helper()
	d := protocol.NewHTTPDecoder(nil)
	var got []string
	emit := func(ev *protocol.Event) {
		if ev.Protocol != protocol.JSONRPC {
			return
		}
		s := fmt.Sprintf("%d %s %s %s id=%s", ev.Seq, ev.Conn, ev.Dir, ev.Kind, ev.ID)
		if ev.Call != nil {
			s += " " + ev.Call.Method + " " + string(ev.Call.Outcome)
		}
		if ev.Reused {
			s += " reused"
		}
		if ev.Status != 0 {
			s += fmt.Sprintf(" status=%d", ev.Status)
		}
		if ev.Err != nil {
			s += " err=" + ev.Err.Error()
		}
		if ev.Why != "" {
			s += " why=" + ev.Why
		}
		got = append(got, s)
	}
	seq := uint64(0)
	feed := func(ev bundle.Event) {
		seq++
		ev.Seq = seq
		d.Feed(&ev, emit)
	}
	request := func(x mcpExchange) {
		h := http.Header{"Content-Type": {"application/json"}}
		if x.session != "" {
			h.Set("Mcp-Session-Id", x.session)
		}
		if x.method == "" {
			x.method = http.MethodPost
		}
		if x.reqBody != "" {
			h.Set("Content-Length", fmt.Sprint(len(x.reqBody)))
		}
		feed(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: x.conn, Method: x.method, URL: "/mcp", Header: h})
		if x.reqBody != "" {
			feed(bundle.Event{Kind: bundle.KindHTTPBody, Conn: x.conn, Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(x.reqBody))})
		}
	}
	response := func(x mcpExchange) {
		if x.status != 0 {
			feed(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: x.conn, Status: x.status, Header: http.Header{"Content-Type": {x.ctype}}})
		}
		if x.resBody != "" {
			feed(bundle.Event{Kind: bundle.KindHTTPBody, Conn: x.conn, Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(x.resBody))})
		}
		feed(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: x.conn, Size: int64(len(x.resBody)), Err: x.err})
	}
	if overlap {
		for _, x := range xs {
			request(x)
		}
		for _, x := range xs {
			response(x)
		}
	} else {
		for _, x := range xs {
			request(x)
			response(x)
		}
	}
	d.Stop(&bundle.Event{Seq: 99}, "the bundle ended", emit)
	return got
}

// TestJSONRPCOverHTTP: JSON-RPC 2.0 over HTTP as MCP's Streamable HTTP
// transport carries it: a POST body is the client's message, the answer is
// an application/json body or server-sent events of that exchange; an HTTP
// error without a JSON-RPC body ends the exchange's calls as HTTP errors;
// ids are scoped per session, and per exchange before a session exists;
// a request is timed from its body. Other HTTP bodies are not JSON-RPC.
func TestJSONRPCOverHTTP(t *testing.T) {
	const (
		discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`
		initReq  = `{"jsonrpc":"2.0","id":1,"method":"initialize"}`
		result1  = `{"jsonrpc":"2.0","id":1,"result":{}}`
		call2    = `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`
		sse2     = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"
	)
	tests := []struct {
		name    string
		overlap bool
		xs      []mcpExchange
		want    []string
	}{
		{"two clients open with id 1, answered 400 without a body", true, []mcpExchange{
			{conn: "h1", reqBody: discover, status: 400, ctype: "text/plain"},
			{conn: "h2", reqBody: discover, status: 400, ctype: "text/plain"},
		}, []string{
			"2 h1 c2s request id=1 server/discover open",
			"4 h2 c2s request id=1 server/discover open",
			"6 h1 s2c response id=1 server/discover failure status=400 err=HTTP 400 Bad Request without a JSON-RPC response",
			"8 h2 s2c response id=1 server/discover failure status=400 err=HTTP 400 Bad Request without a JSON-RPC response",
		}},
		{"an HTTP error body that is not JSON-RPC is not judged as JSON-RPC", false, []mcpExchange{
			{conn: "h1", reqBody: initReq, status: 404, ctype: "application/json", resBody: `{"error":"no session"}`},
		}, []string{
			"2 h1 c2s request id=1 initialize open",
			"5 h1 s2c response id=1 initialize failure status=404 err=HTTP 404 Not Found without a JSON-RPC response",
		}},
		{"a JSON-RPC error on an HTTP error answers its call", false, []mcpExchange{
			{conn: "h1", reqBody: initReq, status: 400, ctype: "application/json", resBody: `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}`},
		}, []string{
			"2 h1 c2s request id=1 initialize open",
			"5 h1 s2c response id=1 initialize failure",
		}},
		{"a session's calls, answered as JSON and as server-sent events", false, []mcpExchange{
			{conn: "h1", reqBody: initReq, status: 200, ctype: "application/json", resBody: result1},
			{conn: "h2", session: "s1", reqBody: call2, status: 200, ctype: "text/event-stream", resBody: sse2},
			{conn: "h3", session: "s1", reqBody: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, status: 202},
		}, []string{
			"2 h1 c2s request id=1 initialize open",
			"5 h1 s2c response id=1 initialize success",
			"7 h2 c2s request id=2 tools/call open",
			"9 h2 s2c notification id=",
			"9 h2 s2c response id=2 tools/call success",
			"12 h3 c2s notification id=",
		}},
		{"a real reuse in flight in one session", true, []mcpExchange{
			{conn: "h1", session: "s1", reqBody: call2, status: 200, ctype: "text/event-stream", resBody: sse2},
			{conn: "h2", session: "s1", reqBody: call2, status: 409, ctype: "text/plain"},
		}, []string{
			"2 h1 c2s request id=2 tools/call open",
			"4 h2 c2s request id=2 reused",
			"6 h1 s2c notification id=",
			"6 h1 s2c response id=2 tools/call success",
		}},
		{"the same id in two sessions at once", true, []mcpExchange{
			{conn: "h1", session: "s1", reqBody: call2, status: 200, ctype: "text/event-stream", resBody: sse2},
			{conn: "h2", session: "s2", reqBody: call2, status: 200, ctype: "text/event-stream", resBody: sse2},
		}, []string{
			"2 h1 c2s request id=2 tools/call open",
			"4 h2 c2s request id=2 tools/call open",
			"6 h1 s2c notification id=",
			"6 h1 s2c response id=2 tools/call success",
			"9 h2 s2c notification id=",
			"9 h2 s2c response id=2 tools/call success",
		}},
		{"a response on another POST answers nothing", true, []mcpExchange{
			{conn: "h1", session: "s1", reqBody: call2, status: 200, ctype: "text/event-stream"},
			{conn: "h2", session: "s1", reqBody: `{"jsonrpc":"2.0","id":3,"method":"x"}`, status: 200, ctype: "text/event-stream", resBody: sse2},
		}, []string{
			"2 h1 c2s request id=2 tools/call open",
			"4 h2 c2s request id=3 x open",
			"6 h1 s2c end id=2 tools/call unknown status=200 why=its HTTP exchange (status 200) ended without a JSON-RPC response",
			"8 h2 s2c notification id=",
			"8 h2 s2c response id=2",
			"9 h2 s2c end id=3 x unknown status=200 why=its HTTP exchange (status 200) ended without a JSON-RPC response",
		}},
		{"the server's request on a GET stream, answered by a POST", false, []mcpExchange{
			{conn: "h1", method: http.MethodGet, session: "s1", status: 200, ctype: "text/event-stream",
				resBody: "data: {\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"method\":\"sampling/createMessage\"}\n\n"},
			{conn: "h2", session: "s1", reqBody: `{"jsonrpc":"2.0","id":"s-1","result":{}}`, status: 202},
		}, []string{
			`3 h1 s2c request id="s-1" sampling/createMessage open`,
			`6 h2 c2s response id="s-1" sampling/createMessage success`,
		}},
		{"no HTTP response: the upstream refused", false, []mcpExchange{
			{conn: "h1", session: "s1", reqBody: call2, err: "upstream: dial tcp: connection refused"},
		}, []string{
			"2 h1 c2s request id=2 tools/call open",
			"3 h1 s2c end id=2 tools/call unknown why=no HTTP response: upstream: dial tcp: connection refused",
		}},
		{"bodies that are not JSON-RPC", false, []mcpExchange{
			{conn: "h1", reqBody: `{"error":"not JSON-RPC","threadId":"t"}`, status: 200, ctype: "application/json", resBody: `{"error":"nope"}`},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, feedExchanges(t, tt.overlap, tt.xs...)); diff != "" {
				t.Errorf("JSON-RPC events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJSONRPCDecoderDropsClosedConns: a WebSocket's close ends its calls and
// its entry, so the decoder's memory follows the sockets open at once, not
// the bundle; a frame after the close (the other side's) still decodes.
func TestJSONRPCDecoderDropsClosedConns(t *testing.T) {
	d := protocol.NewJSONRPCDecoder()
	var ends int
	emit := func(e *protocol.Event) {
		if e.Kind == protocol.KindEnd {
			ends++
		}
	}
	var seq uint64
	for i := range 100 {
		conn := fmt.Sprintf("ws%d", i)
		seq++
		d.Feed(&bundle.Event{Seq: seq, Kind: bundle.KindWSMessage, Conn: conn, Dir: bundle.DirClientToServer,
			Body: bundle.Text([]byte(`{"jsonrpc":"2.0","id":1,"method":"a"}`))}, emit)
		seq++
		d.Feed(&bundle.Event{Seq: seq, Kind: bundle.KindWSClose, Conn: conn, Dir: bundle.DirClientToServer}, emit)
	}
	if d.Conns() != 0 || ends != 100 {
		t.Fatalf("after 100 closed sockets: %d held, %d calls ended; want 0 held, 100 ended", d.Conns(), ends)
	}
	var got []string
	d.Feed(&bundle.Event{Seq: seq + 1, Kind: bundle.KindWSMessage, Conn: "ws0", Dir: bundle.DirServerToClient,
		Body: bundle.Text([]byte(`{"jsonrpc":"2.0","id":1,"result":1}`))}, func(e *protocol.Event) { got = append(got, e.Kind.String()) })
	if diff := cmp.Diff([]string{"response"}, got); diff != "" {
		t.Errorf("late frame (-want +got):\n%s", diff)
	}
}
