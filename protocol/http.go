package protocol

import (
	"bytes"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/wireproof/wireproof/bundle"
)

// HTTPDecoder decodes HTTP exchanges (one bundle connection "h<N>" each): the
// request is a call, the end of the response its answer, with the declared
// and relayed body lengths. A text/event-stream response body is split into
// its server-sent events, each a Notification (Method: the event name,
// "message" by default; Body: the data lines joined by newlines).
//
// JSON-RPC 2.0 carried over HTTP, as MCP's streamable HTTP transport does, is
// decoded too: a request body with a "jsonrpc" member is a JSON-RPC message
// (or batch) from the client, and the answer to it (an application/json body,
// or each server-sent event of a text/event-stream body) messages from the
// server, all on one JSON-RPC connection per session (the Mcp-Session-Id
// header, else the request path), so ids are matched across exchanges.
type HTTPDecoder struct {
	xs  map[string]*exchange
	rpc *JSONRPCDecoder
}

// maxRPCBody caps a buffered JSON-RPC body.
const maxRPCBody = 16 << 20

type exchange struct {
	call     *Call
	status   int
	declared int64 // the response's Content-Length, -1 if none
	head     bool  // no body whatever the headers say (HEAD, 1xx, 204, 304)
	bytes    int64 // response body bytes recorded
	sse      *sseParser

	session string // the JSON-RPC connection of the exchange ("": none)
	reqBody []byte // the request body, until the response begins
	resBody []byte // an application/json response body of a JSON-RPC exchange
	resJSON bool
}

// NewHTTPDecoder returns a decoder with no exchanges.
func NewHTTPDecoder() *HTTPDecoder {
	return &HTTPDecoder{xs: map[string]*exchange{}, rpc: NewJSONRPCDecoder()}
}

// rpcLine feeds one JSON-RPC message (or batch) carried over HTTP to the
// session's JSON-RPC connection.
func (d *HTTPDecoder) rpcLine(x *exchange, at *bundle.Event, dir bundle.Dir, body []byte, emit Emit) {
	d.rpc.Feed(&bundle.Event{Seq: at.Seq, T: at.T, Kind: bundle.KindStdioLine, Conn: x.session, Dir: dir, Body: bundle.Text(body)}, func(ev *Event) {
		ev.Protocol = JSONRPC
		emit(ev)
	})
}

// startRPC decides, once the request body is whole, whether the exchange
// carries JSON-RPC, and feeds the request if it does.
func (d *HTTPDecoder) startRPC(x *exchange, at *bundle.Event, emit Emit) {
	body := x.reqBody
	x.reqBody = nil
	if x.session == "" || len(body) == 0 || !bytes.Contains(body, []byte(`"jsonrpc"`)) || !LooksLikeJSONRPC(body) {
		x.session = ""
		return
	}
	d.rpcLine(x, at, bundle.DirClientToServer, body, emit)
}

// Feed takes http.* events.
func (d *HTTPDecoder) Feed(ev *bundle.Event, emit Emit) {
	switch ev.Kind {
	case bundle.KindHTTPRequest:
		path := ev.URL
		if u, err := url.Parse(ev.URL); err == nil {
			path = u.Path
		}
		call := &Call{Protocol: HTTP, Conn: ev.Conn, ID: ev.Conn, Method: ev.Method + " " + path, Dir: bundle.DirClientToServer, RequestSeq: ev.Seq, Outcome: OutcomeOpen}
		x := &exchange{call: call, declared: -1, head: ev.Method == http.MethodHead}
		if ev.Method == http.MethodPost {
			x.session = "http:" + path
			if id := ev.Header.Get("Mcp-Session-Id"); id != "" {
				x.session = "http:" + id
			}
		}
		d.xs[ev.Conn] = x
		emit(&Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: bundle.DirClientToServer, Protocol: HTTP, Kind: KindRequest, ID: ev.Conn, Method: call.Method, Call: call})
	case bundle.KindHTTPResponse:
		x := d.xs[ev.Conn]
		if x == nil {
			return
		}
		x.status = ev.Status
		if x.session != "" {
			d.startRPC(x, ev, emit)
		}
		if ev.Status < 200 || ev.Status == http.StatusNoContent || ev.Status == http.StatusNotModified {
			x.head = true
		}
		if cl := ev.Header.Get("Content-Length"); cl != "" {
			if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n >= 0 {
				x.declared = n
			}
		}
		mt, _, _ := mime.ParseMediaType(ev.Header.Get("Content-Type"))
		switch mt {
		case "text/event-stream":
			x.sse = &sseParser{}
		case "application/json":
			x.resJSON = x.session != ""
		}
	case bundle.KindHTTPBody:
		x := d.xs[ev.Conn]
		if x == nil {
			return
		}
		if ev.Dir != bundle.DirServerToClient {
			if x.session != "" && len(x.reqBody)+len(ev.Body.Data) <= maxRPCBody {
				x.reqBody = append(x.reqBody, ev.Body.Data...)
			}
			return
		}
		x.bytes += int64(len(ev.Body.Data))
		if x.resJSON && len(x.resBody)+len(ev.Body.Data) <= maxRPCBody {
			x.resBody = append(x.resBody, ev.Body.Data...)
		}
		if x.sse != nil {
			x.sse.feed(ev.Body.Data, func(name string, data []byte) {
				emit(&Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: bundle.DirServerToClient, Protocol: HTTP, Kind: KindNotification, Method: name, Body: data, Call: x.call})
				if x.session != "" && name == "message" && len(bytes.TrimSpace(data)) > 0 {
					d.rpcLine(x, ev, bundle.DirServerToClient, data, emit)
				}
			})
		}
	case bundle.KindHTTPEnd:
		x := d.xs[ev.Conn]
		if x == nil {
			return
		}
		delete(d.xs, ev.Conn)
		if x.session != "" && x.reqBody != nil {
			d.startRPC(x, ev, emit) // no response came
		}
		if x.resJSON && x.session != "" && len(bytes.TrimSpace(x.resBody)) > 0 {
			d.rpcLine(x, ev, bundle.DirServerToClient, x.resBody, emit)
		}
		actual := ev.Size
		if actual == 0 {
			actual = x.bytes
		}
		x.call.Outcome, x.call.EndSeq = OutcomeSuccess, ev.Seq
		if ev.Err != "" {
			x.call.Outcome = OutcomeFailure
		}
		declared := x.declared
		if x.head {
			declared = -1
		}
		emit(&Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: bundle.DirServerToClient, Protocol: HTTP, Kind: KindResponse, ID: ev.Conn,
			Method: x.call.Method, Call: x.call, Status: x.status, Declared: declared, Actual: actual,
			BodyCut: ev.Err != "" || (ev.Truncated && ev.Size == 0), Err: errOrNil(ev.Err)})
	}
}

// Stop ends the exchanges still open, and the JSON-RPC calls in flight.
func (d *HTTPDecoder) Stop(at *bundle.Event, why string, emit Emit) {
	defer d.rpc.Stop(at, why, func(ev *Event) {
		ev.Protocol = JSONRPC
		emit(ev)
	})
	for _, id := range sortedKeys(d.xs) {
		x := d.xs[id]
		delete(d.xs, id)
		x.call.Outcome, x.call.EndSeq = OutcomeUnknown, at.Seq
		emit(&Event{Seq: at.Seq, T: at.T, Conn: id, Protocol: HTTP, Kind: KindEnd, ID: id, Method: x.call.Method, Call: x.call})
	}
}

// sseParser splits a text/event-stream body into events as its chunks
// arrive (https://html.spec.whatwg.org/multipage/server-sent-events.html).
type sseParser struct {
	line []byte // a line not yet ended
	name string
	data []byte
	has  bool // a data line was seen for the event being built
	cr   bool // the previous chunk ended in \r (a \n may follow)
}

func (p *sseParser) feed(b []byte, event func(name string, data []byte)) {
	for len(b) > 0 {
		if p.cr && b[0] == '\n' {
			b = b[1:]
			p.cr = false
			continue
		}
		p.cr = false
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			p.line = append(p.line, b...)
			return
		}
		p.line = append(p.line, b[:i]...)
		if b[i] == '\r' {
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			} else if i+1 == len(b) {
				p.cr = true
			}
		}
		b = b[i+1:]
		p.fieldLine(p.line, event)
		p.line = p.line[:0]
	}
}

func (p *sseParser) fieldLine(line []byte, event func(name string, data []byte)) {
	if len(line) == 0 {
		if p.has {
			name := p.name
			if name == "" {
				name = "message"
			}
			event(name, bytes.TrimSuffix(p.data, []byte("\n")))
		}
		p.name, p.data, p.has = "", nil, false
		return
	}
	if line[0] == ':' {
		return // a comment
	}
	field, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(field) {
	case "event":
		p.name = string(value)
	case "data":
		p.data = append(append(p.data, value...), '\n')
		p.has = true
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
