package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/wireproof/wireproof/bundle"
)

// JSONRPCDecoder decodes JSON-RPC 2.0 (https://www.jsonrpc.org/specification)
// carried one message or batch per stdio line or WebSocket text frame. Either
// side may make requests; a response answers a request made in the other
// direction with the same id. Ids are compared by their JSON value: 7 and
// "7" are different ids. Each message is checked against the envelope rules
// (Event.Invalid). Memory is bounded by the calls in flight.
type JSONRPCDecoder struct {
	conns map[string]*rpcConn
	// stopping: the server is being stopped (ServerStopping, until Stop),
	// so a Codex app-server that exits leaves its calls to the stop.
	stopping bool
}

type rpcConn struct {
	calls   [2]map[string]*Call // in flight, by the direction of the request
	dialect Dialect
	codex   *codexConn // the turns and items of a Codex app-server
	pieces  linePieces // a stdio line cut by the recorder, until its end
}

// NewJSONRPCDecoder returns a decoder with no connections.
func NewJSONRPCDecoder() *JSONRPCDecoder { return &JSONRPCDecoder{conns: map[string]*rpcConn{}} }

// rpcEnvelope has every member of a request, notification or response; a
// nil member was absent (a present null is the bytes "null").
type rpcEnvelope struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// LooksLikeJSONRPC reports whether a line or frame has the shape of a
// JSON-RPC message or batch: an object with a jsonrpc, method, result or
// error member (or an array whose first element is one). A message missing
// its "jsonrpc" is still taken, so that the envelope check can judge it.
func LooksLikeJSONRPC(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) != nil || len(elems) == 0 {
			return false
		}
		b = bytes.TrimSpace(elems[0])
	}
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	var m rpcEnvelope
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	return m.JSONRPC != nil || m.Method != nil || m.Result != nil || m.Error != nil
}

// IDKey is the key of a JSON-RPC id: its JSON text with insignificant
// whitespace removed, so "7" (a string) and 7 (a number) differ.
func IDKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// Conns is the number of connections the decoder holds state for: those
// seen and not closed (a stdio channel is held until Stop).
func (d *JSONRPCDecoder) Conns() int { return len(d.conns) }

func (d *JSONRPCDecoder) conn(id string) *rpcConn {
	c := d.conns[id]
	if c == nil {
		c = &rpcConn{calls: [2]map[string]*Call{{}, {}}}
		d.conns[id] = c
	}
	return c
}

func dirIdx(dir bundle.Dir) int {
	if dir == bundle.DirServerToClient {
		return 1
	}
	return 0
}

// Feed takes stdio.line, ws.message and ws.close events, and the
// proc.start and proc.exit of a stdio channel's process: its argv decides
// the dialect (IsCodexAppServer), its exit ends the calls still open.
func (d *JSONRPCDecoder) Feed(ev *bundle.Event, emit Emit) {
	switch ev.Kind {
	case bundle.KindProcStart:
		if c := d.conns[ev.Conn]; c != nil {
			d.endAll(c, ev, "another process started on the channel", false, emit)
			delete(d.conns, ev.Conn)
		}
		if IsCodexAppServer(procArgv(ev)) {
			c := d.conn(ev.Conn)
			c.dialect, c.codex = DialectCodex, newCodexConn()
		}
	case bundle.KindProcExit:
		if c := d.conns[ev.Conn]; c != nil {
			why, own := exitWhy(ev)
			if c.dialect != DialectCodex {
				why = strings.Replace(why, "the app-server", "the process", 1)
			}
			if own && d.stopping {
				why, own = why+" while the server was being stopped", false
			}
			// Kept (its dialect judges a line drained after the exit), with
			// nothing in flight.
			d.endAll(c, ev, why, own && c.dialect == DialectCodex, emit)
		}
	case bundle.KindWSClose:
		emit(closeEvent(ev, JSONRPC))
		if c := d.conns[ev.Conn]; c != nil {
			d.endAll(c, ev, "", false, emit)
			delete(d.conns, ev.Conn) // nothing in flight is left: keep memory flat
		}
	case bundle.KindStdioLine:
		line, whole, over := d.conn(ev.Conn).pieces.join(ev)
		switch {
		case !whole:
		case over:
			emit(&Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: ev.Dir, Protocol: JSONRPC, Kind: KindDecodeError,
				Err: fmt.Errorf("a line over %d bytes, cut by the recorder, was not decoded", maxJoinedLine), Raw: clipBytes(line, 256)})
		default:
			d.Decode(ev.Seq, ev.T, ev.Conn, ev.Dir, line, emit)
		}
	case bundle.KindWSMessage:
		d.Decode(ev.Seq, ev.T, ev.Conn, ev.Dir, ev.Body.Data, emit)
	}
}

// Decode takes one message or batch of connection conn travelling in dir
// (a stdio line, a WebSocket text frame), recorded at seq and t.
func (d *JSONRPCDecoder) Decode(seq uint64, t int64, conn string, dir bundle.Dir, b []byte, emit Emit) {
	c := d.conns[conn]
	dialect := Dialect("")
	if c != nil {
		dialect = c.dialect
	}
	decodeMessages(seq, t, conn, dir, b, dialect, emit, func(out *Event, failed bool) {
		if c == nil {
			c = d.conn(conn)
		}
		switch out.Kind {
		case KindRequest:
			openCall(c.calls[dirIdx(dir)], out)
		case KindResponse:
			if out.ID != "" {
				answerCall(c.calls[1-dirIdx(dir)], out, failed)
			}
		}
		emit(out)
		if c.codex != nil && out.Kind == KindNotification {
			c.codex.notification(out, emit)
		}
	})
}

// decodeMessages splits b, a JSON-RPC message or batch of conn travelling in
// dir, into its messages. What is not a message (not JSON, an empty batch,
// not an object) it emits itself; each message it hands to correlate with its
// event (Kind request, response or notification; ID, RawID, Method, Invalid
// and Body set) and whether it is an error response. correlate links the
// event to its call and emits it.
func decodeMessages(seq uint64, t int64, conn string, dir bundle.Dir, b []byte, dialect Dialect, emit Emit, correlate func(out *Event, failed bool)) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return
	}
	if b[0] != '[' {
		message(seq, t, conn, dir, b, dialect, emit, correlate)
		return
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(b, &elems); err != nil {
		emit(&Event{Seq: seq, T: t, Conn: conn, Dir: dir, Protocol: JSONRPC, Kind: KindDecodeError, Err: fmt.Errorf("JSON-RPC batch: %w", err), Raw: b})
		return
	}
	if len(elems) == 0 {
		emit(&Event{Seq: seq, T: t, Conn: conn, Dir: dir, Protocol: JSONRPC, Dialect: dialect, Kind: KindNotification, Body: b, Invalid: []string{"an empty batch"}})
		return
	}
	for _, e := range elems {
		message(seq, t, conn, dir, e, dialect, emit, correlate)
	}
}

// message decodes and validates one message of a line, frame, body or
// batch, by the rules of its dialect.
func message(seq uint64, t int64, conn string, dir bundle.Dir, b []byte, dialect Dialect, emit Emit, correlate func(out *Event, failed bool)) {
	out := &Event{Seq: seq, T: t, Conn: conn, Dir: dir, Protocol: JSONRPC, Dialect: dialect, Body: b}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		if !json.Valid(b) {
			out.Kind, out.Err, out.Raw = KindDecodeError, fmt.Errorf("not JSON"), b
			emit(out)
			return
		}
		out.Kind, out.Invalid = KindNotification, []string{"a message that is not a JSON object"}
		emit(out)
		return
	}
	var m rpcEnvelope
	if err := json.Unmarshal(b, &m); err != nil {
		out.Kind, out.Err, out.Raw = KindDecodeError, fmt.Errorf("JSON-RPC message: %w", err), b
		emit(out)
		return
	}
	out.Invalid = envelopeProblems(&m, dialect)
	out.RawID = m.ID
	if m.ID != nil {
		out.ID = IDKey(m.ID)
	}
	switch {
	case m.Method != nil:
		_ = json.Unmarshal(m.Method, &out.Method)
		out.Kind = KindRequest
		if m.ID == nil {
			out.Kind = KindNotification
		}
	default:
		out.Kind = KindResponse
	}
	correlate(out, m.Error != nil)
}

// openCall opens the call of request out (its ID set) in calls, the calls in
// flight in its direction, or marks out Reused if that id is in flight.
func openCall(calls map[string]*Call, out *Event) {
	if _, busy := calls[out.ID]; busy {
		out.Reused = true
		return
	}
	call := &Call{Protocol: out.Protocol, Dialect: out.Dialect, Conn: out.Conn, ID: out.ID, Method: out.Method, Dir: out.Dir, RequestSeq: out.Seq, Outcome: OutcomeOpen}
	calls[out.ID] = call
	out.Call = call
}

// answerCall ends the call in calls that response out (its ID set) answers,
// if one is in flight: a success, or a failure if failed.
func answerCall(calls map[string]*Call, out *Event, failed bool) {
	call := calls[out.ID]
	if call == nil {
		return
	}
	call.Outcome, call.EndSeq = OutcomeSuccess, out.Seq
	if failed {
		call.Outcome = OutcomeFailure
	}
	delete(calls, out.ID)
	out.Call, out.Method = call, call.Method
}

// envelopeProblems lists how m breaks the JSON-RPC 2.0 envelope rules, as
// dialect words them (versionProblem).
func envelopeProblems(m *rpcEnvelope, dialect Dialect) []string {
	var p []string
	if v := versionProblem(m, dialect); v != "" {
		p = append(p, v)
	}
	if m.ID != nil {
		switch jsonType(m.ID) {
		case "string", "number", "null":
			if jsonType(m.ID) == "number" && bytes.ContainsAny(m.ID, ".eE") {
				p = append(p, fmt.Sprintf("id %s has a fractional part (numbers should be integers)", m.ID))
			}
		default:
			p = append(p, fmt.Sprintf("id %s is a %s (must be a string, a number or null)", clipRaw(m.ID), jsonType(m.ID)))
		}
	}
	if m.Method != nil {
		if jsonType(m.Method) != "string" {
			p = append(p, fmt.Sprintf(`"method" is a %s, not a string`, jsonType(m.Method)))
		}
		if m.Params != nil {
			if t := jsonType(m.Params); t != "object" && t != "array" {
				p = append(p, fmt.Sprintf(`"params" is a %s (must be an object or an array)`, t))
			}
		}
		if m.Result != nil || m.Error != nil {
			p = append(p, `a request with a "result" or "error" member`)
		}
		return p
	}
	if m.ID == nil {
		p = append(p, `a response without "id"`)
	}
	switch {
	case m.Result == nil && m.Error == nil:
		p = append(p, `neither "method", "result" nor "error"`)
	case m.Result != nil && m.Error != nil:
		p = append(p, `both "result" and "error" (exactly one is allowed)`)
	case m.Error != nil:
		p = append(p, errorObjectProblems(m.Error)...)
	}
	return p
}

// errorObjectProblems checks an error member: an object with an integer
// "code" and a string "message" ("data" optional).
func errorObjectProblems(raw json.RawMessage) []string {
	if jsonType(raw) != "object" {
		return []string{fmt.Sprintf(`"error" is a %s, not an object`, jsonType(raw))}
	}
	var e struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	_ = json.Unmarshal(raw, &e)
	var p []string
	if e.Code == nil || jsonType(e.Code) != "number" || bytes.ContainsAny(e.Code, ".eE") {
		p = append(p, fmt.Sprintf(`"error.code" is %s, not an integer`, orAbsent(e.Code)))
	}
	if e.Message == nil || jsonType(e.Message) != "string" {
		p = append(p, fmt.Sprintf(`"error.message" is %s, not a string`, orAbsent(e.Message)))
	}
	return p
}

func orAbsent(b json.RawMessage) string {
	if b == nil {
		return "absent"
	}
	return clipRaw(b)
}

func clipBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func clipRaw(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// jsonType names the type of a valid JSON value.
func jsonType(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// ServerStopping notes that the server is being stopped: a Codex
// app-server exiting from now until Stop leaves its requests unanswered by
// the stop's doing, not its own (Event.Unanswered stays false).
func (d *JSONRPCDecoder) ServerStopping(at *bundle.Event) { d.stopping = true }

// Stop ends every call in flight with an unknown outcome.
func (d *JSONRPCDecoder) Stop(at *bundle.Event, why string, emit Emit) {
	d.stopping = false
	for _, id := range sortedKeys(d.conns) {
		d.endAll(d.conns[id], at, "", false, emit)
	}
}

// endAll ends the calls in flight on c, then its Codex turns and items,
// with an unknown outcome at at: why says what ended them ("": the
// router's Stop says), unanswered that the peer that owed each answer
// ended without giving it (Event.Unanswered).
func (d *JSONRPCDecoder) endAll(c *rpcConn, at *bundle.Event, why string, unanswered bool, emit Emit) {
	endCalls(JSONRPC, at, func(ev *Event) {
		ev.Dialect, ev.Why, ev.Unanswered = c.dialect, why, unanswered
		emit(ev)
	}, takeCalls(nil, c.calls[:]...))
	if c.codex != nil {
		c.codex.end(at, func(ev *Event) {
			ev.Why = why
			emit(ev)
		})
	}
}

// takeCalls appends the calls of every map to calls and empties the maps.
func takeCalls(calls []*Call, maps ...map[string]*Call) []*Call {
	for _, m := range maps {
		for id, call := range m {
			calls = append(calls, call)
			delete(m, id)
		}
	}
	return calls
}

// endCalls ends calls, in the order they were requested, with an unknown
// outcome at at.
func endCalls(p Name, at *bundle.Event, emit Emit, calls []*Call) {
	sortCalls(calls)
	for _, call := range calls {
		call.Outcome, call.EndSeq = OutcomeUnknown, at.Seq
		emit(&Event{Seq: at.Seq, T: at.T, Conn: call.Conn, Protocol: p, Kind: KindEnd, ID: call.ID, Method: call.Method, Call: call})
	}
}

// sortCalls sorts calls in the order they were requested; calls of one
// message (a batch) by direction, then id, so that the order is the same in
// every process whatever the order of the maps they came from.
func sortCalls(calls []*Call) {
	sort.Slice(calls, func(i, j int) bool {
		a, b := calls[i], calls[j]
		if a.RequestSeq != b.RequestSeq {
			return a.RequestSeq < b.RequestSeq
		}
		if a.Dir != b.Dir {
			return a.Dir < b.Dir
		}
		return a.ID < b.ID
	})
}

// closeEvent is the protocol event of a ws.close.
func closeEvent(ev *bundle.Event, p Name) *Event {
	return &Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: ev.Dir, Protocol: p, Kind: KindClose, Code: ev.Code,
		Abnormal: ev.Err != "", Err: errOrNil(ev.Err)}
}

type textErr string

func (e textErr) Error() string { return string(e) }

func errOrNil(s string) error {
	if s == "" {
		return nil
	}
	return textErr(s)
}

// isJSONRPCFrame reports whether a WebSocket's first message is plain
// JSON-RPC 2.0 (a "jsonrpc" member) and not Effect RPC's JSON-RPC
// serialization (whose control methods are named "@effect/rpc/...").
func isJSONRPCFrame(b []byte) bool {
	return bytes.Contains(b, []byte(`"jsonrpc"`)) && !bytes.Contains(b, []byte(`"@effect/rpc/`)) && LooksLikeJSONRPC(b) &&
		!strings.Contains(string(b), `"_tag"`)
}
