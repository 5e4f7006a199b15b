package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/wireproof/wireproof/bundle"
)

// StreamJSONDecoder decodes the Claude CLI's stream-json lines into calls:
//
//   - a control_request (its request_id; method: the request's subtype)
//     answered by a control_response in the other direction whose
//     response.request_id matches (subtype success or error);
//   - a tool_use content block of an assistant message (its id; method
//     "tool_use " and the tool's name) answered by a tool_result block
//     (tool_use_id) of a later user message, failed when is_error;
//   - a turn (method "turn"): a user message on stdin while no turn is open,
//     ended by the next result message (subtype success, anything else or
//     is_error fails). A user message while a turn is open joins it; a result
//     with no turn open (a turn the CLI started itself, such as a background
//     task's notification) is a notification.
//
// Other lines (system, unknown types, control_cancel_request) are
// notifications; a line that is not a JSON object is a decode error. Memory is
// bounded by the calls in flight.
type StreamJSONDecoder struct {
	conns map[string]*sjConn
}

type sjConn struct {
	control [2]map[string]*Call // in flight, by the direction of the request
	tools   map[string]*Call
	turn    *Call
	turns   int
	pieces  linePieces // a line cut by the recorder, until its end
}

// NewStreamJSONDecoder returns a decoder with no connections.
func NewStreamJSONDecoder() *StreamJSONDecoder {
	return &StreamJSONDecoder{conns: map[string]*sjConn{}}
}

// sjLine has the members of a stream-json line the decoder reads.
type sjLine struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	IsError   bool            `json:"is_error"`
	RequestID json.RawMessage `json:"request_id"`
	JSONRPC   json.RawMessage `json:"jsonrpc"`
	Request   *struct {
		Subtype string `json:"subtype"`
	} `json:"request"`
	Response *struct {
		Subtype   string          `json:"subtype"`
		RequestID json.RawMessage `json:"request_id"`
	} `json:"response"`
	Message *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type sjBlock struct {
	Type      string          `json:"type"`
	ID        json.RawMessage `json:"id"`
	Name      string          `json:"name"`
	ToolUseID json.RawMessage `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
}

var streamJSONTypes = map[string]bool{
	"control_request": true, "control_response": true, "system": true,
	"user": true, "assistant": true, "result": true,
}

// LooksLikeStreamJSON reports whether a line is a stream-json message: a JSON
// object whose "type" is control_request, control_response, system, user,
// assistant or result, with no "jsonrpc" member.
func LooksLikeStreamJSON(b []byte) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	var m sjLine
	return json.Unmarshal(b, &m) == nil && m.JSONRPC == nil && streamJSONTypes[m.Type]
}

// StreamJSONRoute routes to d the stdio connections whose first line is a
// stream-json message (LooksLikeStreamJSON).
func StreamJSONRoute(d *StreamJSONDecoder) Route {
	return Route{Protocol: StreamJSON, Decoder: d, Match: func(open, first *bundle.Event) bool {
		return first != nil && first.Kind == bundle.KindStdioLine && LooksLikeStreamJSON(first.Body.Data)
	}}
}

func (d *StreamJSONDecoder) conn(id string) *sjConn {
	c := d.conns[id]
	if c == nil {
		c = &sjConn{control: [2]map[string]*Call{{}, {}}, tools: map[string]*Call{}}
		d.conns[id] = c
	}
	return c
}

// Feed takes stdio.line events.
func (d *StreamJSONDecoder) Feed(ev *bundle.Event, emit Emit) {
	if ev.Kind != bundle.KindStdioLine {
		return
	}
	c := d.conn(ev.Conn)
	line, whole, over := c.pieces.join(ev)
	if !whole {
		return
	}
	b := bytes.TrimSpace(line)
	if len(b) == 0 {
		return
	}
	out := &Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: ev.Dir, Protocol: StreamJSON, Body: b}
	if over {
		out.Kind, out.Err, out.Raw = KindDecodeError, fmt.Errorf("stream-json line: over %d bytes, cut by the recorder, not decoded", maxJoinedLine), clipBytes(b, 256)
		emit(out)
		return
	}
	var m sjLine
	if b[0] != '{' {
		out.Kind, out.Err, out.Raw = KindDecodeError, fmt.Errorf("stream-json line: not a JSON object"), b
		emit(out)
		return
	}
	if err := json.Unmarshal(b, &m); err != nil {
		out.Kind, out.Err, out.Raw = KindDecodeError, fmt.Errorf("stream-json line: %w", err), b
		emit(out)
		return
	}
	switch m.Type {
	case "control_request":
		if m.RequestID == nil {
			break
		}
		if m.Request != nil {
			out.Method = m.Request.Subtype
		}
		d.request(c.control[dirIdx(ev.Dir)], out, m.RequestID, emit)
		return
	case "control_response":
		if m.Response == nil || m.Response.RequestID == nil {
			break
		}
		d.response(c.control[1-dirIdx(ev.Dir)], out, m.Response.RequestID, m.Response.Subtype != "success", emit)
		return
	case "assistant", "user":
		d.message(c, out, &m, emit)
		return
	case "result":
		if c.turn == nil {
			break
		}
		call := c.turn
		c.turn = nil
		call.Outcome, call.EndSeq = OutcomeSuccess, ev.Seq
		if m.Subtype != "success" || m.IsError {
			call.Outcome = OutcomeFailure
		}
		out.Kind, out.ID, out.Method, out.Call = KindResponse, call.ID, call.Method, call
		emit(out)
		return
	}
	out.Kind, out.Method = KindNotification, m.Type
	emit(out)
}

// request opens a call with id raw in calls, or marks the request Reused if
// that id is in flight.
func (d *StreamJSONDecoder) request(calls map[string]*Call, out *Event, raw json.RawMessage, emit Emit) {
	out.Kind, out.RawID, out.ID = KindRequest, raw, IDKey(raw)
	openCall(calls, out)
	emit(out)
}

// response ends the call with id raw in calls; an answer to no call in
// flight is emitted without one (the conformance suite judges it).
func (d *StreamJSONDecoder) response(calls map[string]*Call, out *Event, raw json.RawMessage, failed bool, emit Emit) {
	out.Kind, out.RawID, out.ID = KindResponse, raw, IDKey(raw)
	answerCall(calls, out, failed)
	emit(out)
}

// message decodes a user or assistant message: its tool_use and tool_result
// blocks are requests and responses; a user message on stdin opens a turn.
// A message with neither is a notification.
func (d *StreamJSONDecoder) message(c *sjConn, out *Event, m *sjLine, emit Emit) {
	var blocks []sjBlock
	if m.Message != nil && len(m.Message.Content) > 0 && m.Message.Content[0] == '[' {
		_ = json.Unmarshal(m.Message.Content, &blocks) // a malformed block list carries no calls
	}
	emitted := false
	for _, bl := range blocks {
		e := *out
		switch {
		case m.Type == "assistant" && bl.Type == "tool_use" && bl.ID != nil:
			e.Method = "tool_use " + bl.Name
			d.request(c.tools, &e, bl.ID, emit)
		case m.Type == "user" && bl.Type == "tool_result" && bl.ToolUseID != nil:
			d.response(c.tools, &e, bl.ToolUseID, bl.IsError, emit)
		default:
			continue
		}
		emitted = true
	}
	if m.Type == "user" && out.Dir == bundle.DirClientToServer && c.turn == nil {
		c.turns++
		id := fmt.Sprintf("turn-%d", c.turns)
		call := &Call{Protocol: StreamJSON, Conn: out.Conn, ID: id, Method: "turn", Dir: out.Dir, RequestSeq: out.Seq, Outcome: OutcomeOpen}
		c.turn = call
		out.Kind, out.ID, out.Method, out.Call = KindRequest, id, "turn", call
		emit(out)
		return
	}
	if !emitted {
		out.Kind, out.Method = KindNotification, m.Type
		emit(out)
	}
}

// Stop ends every call in flight with an unknown outcome.
func (d *StreamJSONDecoder) Stop(at *bundle.Event, why string, emit Emit) {
	for _, id := range sortedKeys(d.conns) {
		c := d.conns[id]
		var calls []*Call
		if c.turn != nil {
			calls = append(calls, c.turn)
			c.turn = nil
		}
		endCalls(StreamJSON, at, emit, takeCalls(calls, c.control[0], c.control[1], c.tools))
	}
}
