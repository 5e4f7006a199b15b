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
// JSON-RPC 2.0 carried over HTTP, as MCP's Streamable HTTP transport does, is
// decoded too (see mcpScope): a POST body with a "jsonrpc" member is the
// client's message (or batch), the answer to it an application/json body or
// the server-sent events of a text/event-stream body.
type HTTPDecoder struct {
	xs      map[string]*exchange
	scopes  map[string]*mcpScope
	model   modelCalls
	keep    func(req *bundle.Event) bool
	maxBody int
}

// HTTPOptions tune an HTTPDecoder. A nil *HTTPOptions means the defaults.
type HTTPOptions struct {
	// Keep, if set, is asked at each request whether the response body is
	// wanted whole: the exchange's Response event then carries it (Body), or
	// says it was larger than MaxBody (BodyTooBig).
	Keep func(req *bundle.Event) bool
	// MaxBody caps a kept response body; 0 means 64 MiB.
	MaxBody int
}

// maxRPCBody caps a buffered JSON-RPC body.
const maxRPCBody = 16 << 20

type exchange struct {
	call     *Call
	status   int
	answered bool  // an http.response was recorded
	declared int64 // the response's Content-Length, -1 if none
	head     bool  // no body whatever the headers say (HEAD, 1xx, 204, 304)
	bytes    int64 // response body bytes recorded
	sse      *sseParser

	keep    bool   // Keep asked for the response body
	body    []byte // the kept response body
	tooBig  bool   // the kept body went over MaxBody
	reqLeft int64  // request body bytes still to come (Content-Length), -1 unknown

	rpc   *mcpExchange   // JSON-RPC over the exchange; nil: none
	model *modelExchange // a model call (Anthropic's Messages API); nil: none

	// stopped: Stop ended the call (the server stopped) while the exchange
	// was open; what the proxy still records of it is Late.
	stopped bool
}

// NewHTTPDecoder returns a decoder with no exchanges.
func NewHTTPDecoder(opts *HTTPOptions) *HTTPDecoder {
	d := &HTTPDecoder{xs: map[string]*exchange{}, scopes: map[string]*mcpScope{}, maxBody: 64 << 20}
	if opts != nil {
		d.keep = opts.Keep
		if opts.MaxBody > 0 {
			d.maxBody = opts.MaxBody
		}
	}
	return d
}

// Held is what the decoder holds state for: the exchanges open and the MCP
// scopes (sessions, exchanges before a session) in use or with calls in
// flight. Ended exchanges are dropped, so memory follows what is open.
func (d *HTTPDecoder) Held() int { return len(d.xs) + len(d.scopes) }

// Feed takes http.* events.
func (d *HTTPDecoder) Feed(ev *bundle.Event, emit Emit) {
	switch ev.Kind {
	case bundle.KindHTTPRequest:
		path := ev.URL
		if u, err := url.Parse(ev.URL); err == nil {
			path = u.Path
		}
		call := &Call{Protocol: HTTP, Conn: ev.Conn, ID: ev.Conn, Method: ev.Method + " " + path, Dir: bundle.DirClientToServer, RequestSeq: ev.Seq, Outcome: OutcomeOpen}
		x := &exchange{call: call, declared: -1, head: ev.Method == http.MethodHead, reqLeft: -1}
		x.keep = d.keep != nil && d.keep(ev)
		if cl, err := strconv.ParseInt(ev.Header.Get("Content-Length"), 10, 64); err == nil && cl >= 0 {
			x.reqLeft = cl
		}
		x.rpc = d.openMCP(ev)
		x.model = d.model.open(ev, path, x.reqLeft)
		d.xs[ev.Conn] = x
		emit(&Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: bundle.DirClientToServer, Protocol: HTTP, Kind: KindRequest, ID: ev.Conn, Method: call.Method, Call: call})
		if x.model != nil && x.reqLeft == 0 {
			x.model.requestDone(ev, emit)
		}
	case bundle.KindHTTPResponse:
		x := d.xs[ev.Conn]
		if x == nil {
			return
		}
		x.status, x.answered = ev.Status, true
		d.requestDone(x, ev, emit)
		if x.model != nil {
			x.model.requestDone(ev, emit)
			x.model.response(ev)
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
		if x.stopped {
			mt = "" // its messages are not decoded: its call is over
		}
		switch mt {
		case "text/event-stream":
			x.sse = &sseParser{}
		case "application/json":
			if x.rpc != nil {
				x.rpc.resJSON = true
			}
		}
	case bundle.KindHTTPBody:
		x := d.xs[ev.Conn]
		if x == nil {
			return
		}
		if ev.Dir != bundle.DirServerToClient {
			d.requestBody(x, ev, emit)
			if x.model != nil {
				x.model.requestBytes(ev, emit)
			}
			return
		}
		if x.model != nil {
			x.model.responseBytes(ev.Body.Data)
		}
		x.bytes += int64(len(ev.Body.Data))
		if x.keep && !x.tooBig {
			if len(x.body)+len(ev.Body.Data) > d.maxBody {
				x.tooBig, x.body = true, nil
			} else {
				x.body = append(x.body, ev.Body.Data...)
			}
		}
		if m := x.rpc; m != nil && m.resJSON && len(m.resBody)+len(ev.Body.Data) <= maxRPCBody {
			m.resBody = append(m.resBody, ev.Body.Data...)
		}
		if x.sse != nil {
			x.sse.feed(ev.Body.Data, func(name string, data []byte) {
				emit(&Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: bundle.DirServerToClient, Protocol: HTTP, Kind: KindNotification, Method: name, Body: data, Call: x.call})
				if x.rpc != nil && name == "message" {
					d.serverMessage(x, ev, data, emit)
				}
				if x.model != nil {
					x.model.event(name, data)
				}
			})
		}
	case bundle.KindHTTPEnd:
		x := d.xs[ev.Conn]
		if x == nil {
			return
		}
		delete(d.xs, ev.Conn)
		if x.stopped {
			// Its call ended at Stop: the end recorded after it crossed that
			// ending (Late), and carries the kept body.
			out := &Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: bundle.DirServerToClient, Protocol: HTTP, Kind: KindResponse, ID: ev.Conn,
				Method: x.call.Method, Call: x.call, Status: x.status, Declared: -1, Actual: x.bytes, Late: true,
				BodyCut: true, Truncated: ev.Truncated, Err: errOrNil(ev.Err)}
			if x.keep {
				out.Body, out.BodyTooBig = x.body, x.tooBig
			}
			emit(out)
			return
		}
		d.requestDone(x, ev, emit) // no response came
		if m := x.rpc; m != nil && m.resJSON {
			d.serverMessage(x, ev, m.resBody, emit)
		}
		d.endMCP(x, ev, emit)
		if x.model != nil {
			d.model.end(x.model, ev, x.answered, emit)
		}
		actual := ev.Size
		if actual == 0 {
			actual = x.bytes
		}
		out := &Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: bundle.DirServerToClient, Protocol: HTTP, Kind: KindResponse, ID: ev.Conn,
			Method: x.call.Method, Call: x.call, Status: x.status, Declared: x.declared, Actual: actual,
			BodyCut: ev.Err != "" || (ev.Truncated && ev.Size == 0), Truncated: ev.Truncated, Err: errOrNil(ev.Err)}
		if x.head {
			out.Declared = -1
		}
		if x.keep {
			out.Body, out.BodyTooBig = x.body, x.tooBig
		}
		x.call.EndSeq = ev.Seq
		switch {
		case !x.answered:
			// No response at all: the exchange failed before the server
			// answered (its upstream refused the connection, the server had
			// stopped). Nothing was answered, so nothing is judged as an
			// answer: the call ends without one, saying why.
			x.call.Outcome = OutcomeUnknown
			out.Kind, out.Why = KindEnd, "no HTTP response"
			if ev.Err != "" {
				out.Why += ": " + ev.Err
			}
		case ev.Err != "":
			x.call.Outcome = OutcomeFailure
		default:
			x.call.Outcome = OutcomeSuccess
		}
		emit(out)
	}
}

// Stop ends the exchanges still open, and the JSON-RPC calls in flight. An
// exchange the proxy still records after it (its http.end comes when the
// server stopped under it) is kept to its end, which is emitted Late with
// what was recorded (a kept body included); its messages are not decoded.
func (d *HTTPDecoder) Stop(at *bundle.Event, why string, emit Emit) {
	for _, id := range sortedKeys(d.xs) {
		x := d.xs[id]
		if x.stopped {
			continue
		}
		x.stopped, x.sse = true, nil
		if x.model != nil {
			x.model.stop(at, emit)
			x.model = nil
		}
		if x.rpc != nil {
			d.release(x.rpc)
			x.rpc = nil
		}
		x.call.Outcome, x.call.EndSeq = OutcomeUnknown, at.Seq
		emit(&Event{Seq: at.Seq, T: at.T, Conn: id, Protocol: HTTP, Kind: KindEnd, ID: id, Method: x.call.Method, Call: x.call})
	}
	for _, key := range sortedKeys(d.scopes) {
		s := d.scopes[key]
		delete(d.scopes, key)
		endCalls(JSONRPC, at, emit, takeCalls(nil, s.calls[:]...))
	}
	d.model.unansweredCalls(at, why != WhyCut, emit)
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
