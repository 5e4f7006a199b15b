package protocol

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"

	"github.com/wireproof/wireproof/bundle"
)

// JSON-RPC over HTTP (MCP's Streamable HTTP transport) is correlated per
// exchange: the requests a POST body carries are answered on that POST's
// response (an application/json body, or the server-sent events of a
// text/event-stream body), and a POST whose response ends without answering
// them ends them there: as an HTTP error with its status when the server
// answered 4xx or 5xx without a JSON-RPC response (MCP servers answer a
// request they do not take that way), else without an answer (Why says so).
//
// Ids are scoped per MCP session (the Mcp-Session-Id header): a request
// whose id is in flight in its session is Reused. A request made before a
// session exists (initialize, server/discover) is scoped to its own
// exchange, since nothing on the wire says which client made it: the
// processes that each open with id 1 are not one client reusing it.
//
// The server's own requests (on a GET stream or a POST's events) are
// answered by a later POST of the same session; a response on a GET stream
// (a stream resumed after a cut) may answer any request of its session in
// flight. A request is timed from the recorded end of its body (its
// Content-Length reached), else from the response, to its answer.

// mcpScope holds the JSON-RPC calls in flight of one MCP session, or of one
// exchange made outside any session.
type mcpScope struct {
	key   string
	calls [2]map[string]*Call // in flight by the request's direction: the client's, the server's
	open  int                 // exchanges that use the scope
}

// mcpExchange is the JSON-RPC side of one HTTP exchange.
type mcpExchange struct {
	scope   *mcpScope
	post    bool
	reqBody []byte
	reqDone bool
	reqs    map[string]*Call // the client requests of this exchange not yet answered
	resJSON bool             // an application/json response: decoded whole at the end
	resBody []byte
}

// openMCP starts the JSON-RPC side of an exchange: a POST (its body decides
// at its end whether it carries JSON-RPC), or a GET of an MCP session (its
// server-sent events); nil for any other exchange.
func (d *HTTPDecoder) openMCP(req *bundle.Event) *mcpExchange {
	session := req.Header.Get("Mcp-Session-Id")
	if req.Method != http.MethodPost && (req.Method != http.MethodGet || session == "") {
		return nil
	}
	key := "exchange " + req.Conn
	if session != "" {
		key = "session " + session
	}
	s := d.scopes[key]
	if s == nil {
		s = &mcpScope{key: key, calls: [2]map[string]*Call{{}, {}}}
		d.scopes[key] = s
	}
	s.open++
	return &mcpExchange{scope: s, post: req.Method == http.MethodPost, reqDone: req.Method != http.MethodPost, reqs: map[string]*Call{}}
}

// release drops the exchange's hold on its scope, and the scope once nothing
// uses it.
func (d *HTTPDecoder) release(m *mcpExchange) {
	s := m.scope
	s.open--
	if s.open == 0 && len(s.calls[0]) == 0 && len(s.calls[1]) == 0 {
		delete(d.scopes, s.key)
	}
}

// requestBody takes a chunk of the request body: JSON-RPC is decoded once
// the body is whole (its Content-Length reached).
func (d *HTTPDecoder) requestBody(x *exchange, ev *bundle.Event, emit Emit) {
	m := x.rpc
	if m == nil || m.reqDone {
		return
	}
	if len(m.reqBody) == 0 {
		if b := bytes.TrimLeft(ev.Body.Data, " \t\r\n"); len(b) > 0 && b[0] != '{' && b[0] != '[' {
			// Not JSON: not JSON-RPC (a form, an upload); nothing is kept.
			d.release(m)
			x.rpc = nil
			return
		}
	}
	if len(m.reqBody)+len(ev.Body.Data) <= maxRPCBody {
		m.reqBody = append(m.reqBody, ev.Body.Data...)
	}
	if x.reqLeft >= 0 {
		if x.reqLeft -= int64(len(ev.Body.Data)); x.reqLeft <= 0 {
			d.requestDone(x, ev, emit)
		}
	}
}

// requestDone decides, once the request body is whole (or the response
// began, or the exchange ended), whether the exchange carries JSON-RPC, and
// decodes the client's messages if it does.
func (d *HTTPDecoder) requestDone(x *exchange, at *bundle.Event, emit Emit) {
	m := x.rpc
	if m == nil || m.reqDone {
		return
	}
	m.reqDone = true
	body := m.reqBody
	m.reqBody = nil
	if len(body) == 0 || !bytes.Contains(body, []byte(`"jsonrpc"`)) || !LooksLikeJSONRPC(body) {
		d.release(m)
		x.rpc = nil
		return
	}
	s := m.scope
	decodeMessages(at.Seq, at.T, at.Conn, bundle.DirClientToServer, body, "", emit, func(out *Event, failed bool) {
		switch out.Kind {
		case KindRequest:
			openCall(s.calls[0], out)
			if out.Call != nil {
				m.reqs[out.ID] = out.Call
			}
		case KindResponse:
			if out.ID != "" {
				answerCall(s.calls[1], out, failed) // the client answers a request of the server
			}
		}
		emit(out)
	})
}

// serverMessage decodes a message (or batch) of the server on the exchange:
// an application/json body, or one server-sent event's data.
func (d *HTTPDecoder) serverMessage(x *exchange, at *bundle.Event, data []byte, emit Emit) {
	m := x.rpc
	data = bytes.TrimSpace(data)
	if m == nil || len(data) == 0 {
		return
	}
	if x.status >= 400 && !bytes.Contains(data, []byte(`"jsonrpc"`)) {
		return // an HTTP error's own body, not a JSON-RPC message
	}
	s := m.scope
	decodeMessages(at.Seq, at.T, at.Conn, bundle.DirServerToClient, data, "", emit, func(out *Event, failed bool) {
		switch out.Kind {
		case KindRequest:
			openCall(s.calls[1], out)
		case KindResponse:
			if out.ID == "" {
				break
			}
			if call := m.reqs[out.ID]; call != nil {
				delete(m.reqs, out.ID)
				answerCall(s.calls[0], out, failed)
			} else if !m.post {
				answerCall(s.calls[0], out, failed) // a resumed stream
			}
		}
		emit(out)
	})
}

// endMCP ends, at the exchange's end, the client requests it carried that
// its response did not answer, and releases its scope.
func (d *HTTPDecoder) endMCP(x *exchange, at *bundle.Event, emit Emit) {
	m := x.rpc
	if m == nil {
		return
	}
	x.rpc = nil
	defer d.release(m)
	calls := make([]*Call, 0, len(m.reqs))
	for id, call := range m.reqs {
		calls = append(calls, call)
		delete(m.scope.calls[0], id)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].RequestSeq < calls[j].RequestSeq })
	for _, call := range calls {
		out := &Event{Seq: at.Seq, T: at.T, Conn: at.Conn, Dir: bundle.DirServerToClient, Protocol: JSONRPC, ID: call.ID, Method: call.Method, Call: call, Status: x.status}
		call.EndSeq = at.Seq
		switch {
		case x.answered && x.status >= 400:
			call.Outcome, out.Kind = OutcomeFailure, KindResponse
			out.Err = textErr(fmt.Sprintf("HTTP %d %s without a JSON-RPC response", x.status, http.StatusText(x.status)))
		case !x.answered:
			call.Outcome, out.Kind, out.Why = OutcomeUnknown, KindEnd, "no HTTP response"
			if at.Err != "" {
				out.Why += ": " + at.Err
			}
		default:
			call.Outcome, out.Kind = OutcomeUnknown, KindEnd
			out.Why = fmt.Sprintf("its HTTP exchange (status %d) ended without a JSON-RPC response", x.status)
		}
		emit(out)
	}
}
