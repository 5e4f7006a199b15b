package replay

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/t3"
)

// ConformanceChecks is the protocol-conformance suite: checks of the
// protocols themselves, whatever the scenario, run on every decoded protocol
// event of every bundle (plain recordings included) until the run's end mark.
// The first failure decides the suite.
var ConformanceChecks = assert.Checks[*protocol.Event]{
	{ID: assert.CheckAnswersRequest, Message: assert.Messages[assert.CheckAnswersRequest], Stage: assert.StageEvent, Test: answersRequest},
	{ID: assert.CheckIDNotReused, Message: assert.Messages[assert.CheckIDNotReused], Stage: assert.StageEvent, Test: idNotReused},
	{ID: assert.CheckStreamAcked, Message: assert.Messages[assert.CheckStreamAcked], Stage: assert.StageEvent, Test: streamAcked},
	{ID: assert.CheckInterruptAnswer, Message: assert.Messages[assert.CheckInterruptAnswer], Stage: assert.StageEvent, Test: interruptAnswered},
	{ID: assert.CheckJSONRPCEnvelope, Message: assert.Messages[assert.CheckJSONRPCEnvelope], Stage: assert.StageEvent, Test: jsonRPCEnvelope},
	{ID: assert.CheckHTTPBodyLength, Message: assert.Messages[assert.CheckHTTPBodyLength], Stage: assert.StageEvent, Test: httpBodyLength},
	{ID: assert.CheckWebSocketCloseOK, Message: assert.Messages[assert.CheckWebSocketCloseOK], Stage: assert.StageEvent, Test: wsCloseCode},
}

// answersRequest: every answer (response, chunk) and every client message of
// a call (ack, interrupt) belongs to a request in flight, so each request is
// answered at most once. Messages that crossed their call's end on the wire
// (Event.Late) and a JSON-RPC error answering an unparseable request (id
// null) are not answers to judge.
func answersRequest(ev *protocol.Event) *assert.Failure {
	switch ev.Kind {
	case protocol.KindResponse, protocol.KindChunk, protocol.KindAck, protocol.KindInterrupt:
	default:
		return nil
	}
	if ev.Call != nil || ev.Late || ev.Protocol == protocol.HTTP || string(ev.RawID) == "null" || (ev.Protocol == protocol.JSONRPC && ev.RawID == nil) {
		return nil
	}
	return &assert.Failure{
		Expected: fmt.Sprintf("a %s for a request in flight", ev.Kind),
		Seen:     fmt.Sprintf("a %s %s for id %s, which is not in flight (never requested, or already answered)", ev.Protocol, ev.Kind, ev.ID),
	}
}

// idNotReused: a request id is not reused while its call is in flight.
func idNotReused(ev *protocol.Event) *assert.Failure {
	if ev.Kind != protocol.KindRequest || !ev.Reused {
		return nil
	}
	return &assert.Failure{Expected: "a request id not in flight",
		Seen: fmt.Sprintf("%s request %s reuses id %s while its call is in flight", ev.Protocol, ev.Method, ev.ID)}
}

// streamAcked: an Effect RPC stream sends its next chunk only after the
// client acknowledged the previous one.
func streamAcked(ev *protocol.Event) *assert.Failure {
	if ev.Kind != protocol.KindChunk || ev.Protocol != protocol.EffectRPC || ev.Call == nil || ev.Call.Chunks-1 <= ev.Call.Acks {
		return nil
	}
	return &assert.Failure{Expected: fmt.Sprintf("an Ack of chunk %d of %s (id %s) before chunk %d", ev.Call.Chunks-1, ev.Call.Method, ev.ID, ev.Call.Chunks),
		Seen: fmt.Sprintf("chunk %d after %d Ack(s)", ev.Call.Chunks, ev.Call.Acks)}
}

// interruptAnswered: a call the client interrupted is answered (its Exit)
// before the server closes the connection. A connection the client closed
// first, a server that stopped and a bundle that ended are not the server's
// doing to judge.
func interruptAnswered(ev *protocol.Event) *assert.Failure {
	if ev.Kind != protocol.KindEnd || ev.Call == nil || !ev.Call.Interrupted || ev.ClosedBy != bundle.DirServerToClient {
		return nil
	}
	return &assert.Failure{Expected: fmt.Sprintf("an Exit answering the Interrupt of %s (id %s)", ev.Call.Method, ev.ID),
		Seen: "the server closed the connection without answering it"}
}

// jsonRPCEnvelope: every JSON-RPC message follows the 2.0 envelope rules.
func jsonRPCEnvelope(ev *protocol.Event) *assert.Failure {
	if len(ev.Invalid) == 0 {
		return nil
	}
	return &assert.Failure{Expected: "a JSON-RPC 2.0 request, notification or response",
		Seen: strings.Join(ev.Invalid, "; ") + ": " + clip(ev.Body, 200)}
}

// httpBodyLength: a response body relayed whole has the length its
// Content-Length declared.
func httpBodyLength(ev *protocol.Event) *assert.Failure {
	if ev.Protocol != protocol.HTTP || ev.Kind != protocol.KindResponse || ev.Declared < 0 || ev.BodyCut || ev.Actual == ev.Declared {
		return nil
	}
	return &assert.Failure{Expected: fmt.Sprintf("%d body bytes (Content-Length)", ev.Declared),
		Seen: fmt.Sprintf("%d body bytes in the response to %s", ev.Actual, ev.Method), Diff: cmp.Diff(ev.Declared, ev.Actual)}
}

// wsCloseCode: a close frame carries a code an endpoint may send (RFC 6455
// 7.4): 1000-1003, 1007-1014 or 3000-4999. 1005 (a close frame without a
// code) and 1006 (no close frame) are what a side saw, not codes sent.
func wsCloseCode(ev *protocol.Event) *assert.Failure {
	if ev.Kind != protocol.KindClose || ev.Abnormal || validCloseCode(ev.Code) {
		return nil
	}
	return &assert.Failure{Expected: "a close code of RFC 6455 (1000-1003, 1007-1014, 3000-4999)",
		Seen: fmt.Sprintf("close code %d from the %s", ev.Code, sideName(ev.Dir))}
}

func validCloseCode(c int) bool {
	switch {
	case c == 0, c == 1005, c == 1006:
		return true
	case c >= 1000 && c <= 1003, c >= 1007 && c <= 1014, c >= 3000 && c <= 4999:
		return true
	}
	return false
}

func sideName(d bundle.Dir) string {
	if d == bundle.DirServerToClient {
		return "server"
	}
	return "client"
}

// EventSuite is a suite of checks on protocol events: its id (as the
// verdict's Suites name it), whether it runs on a bundle, and its ordered
// checks. The first failure decides the suite.
type EventSuite struct {
	ID string
	// Applies decides from the bundle's manifest whether the suite runs; nil
	// means on every bundle.
	Applies func(bundle.Manifest) bool
	Checks  assert.Checks[*protocol.Event]
}

// ConformanceSuite runs ConformanceChecks on every bundle.
var ConformanceSuite = EventSuite{ID: assert.SuiteConformance, Checks: ConformanceChecks}

// conformance runs the event suites on the protocol events until the end
// mark, and keeps each suite's first failure.
type conformance struct {
	suites  []EventSuite
	active  []bool
	failure []*assert.Failure
	pending int  // active suites without a failure yet
	done    bool // past the cut-off
	onEvent func(*protocol.Event)
	ev      protocol.Event // reused for the Effect RPC events
	call    protocol.Call
	// closedBy is, per WebSocket connection, the side whose close frame was
	// recorded first.
	closedBy map[string]bundle.Dir
}

func (c *conformance) init(suites []EventSuite, onEvent func(*protocol.Event)) {
	c.suites, c.onEvent = suites, onEvent
	c.active, c.failure = make([]bool, len(suites)), make([]*assert.Failure, len(suites))
	c.manifest(bundle.Manifest{})
}

// manifest decides which suites run on the bundle.
func (c *conformance) manifest(m bundle.Manifest) {
	c.pending = 0
	for i, s := range c.suites {
		c.active[i] = s.Applies == nil || s.Applies(m)
		if c.active[i] {
			c.pending++
		}
	}
}

// busy reports whether anything still reads the protocol events.
func (c *conformance) busy() bool { return !c.done && (c.pending > 0 || c.onEvent != nil) }

func (c *conformance) observe(ev *protocol.Event) {
	if c.done {
		return
	}
	if ev.Kind == protocol.KindClose && ev.Dir != "" && !ev.Abnormal {
		if c.closedBy == nil {
			c.closedBy = map[string]bundle.Dir{}
		}
		if _, ok := c.closedBy[ev.Conn]; !ok {
			c.closedBy[ev.Conn] = ev.Dir
		}
	}
	if c.onEvent != nil {
		c.onEvent(ev)
	}
	if c.pending == 0 {
		return
	}
	for i := range c.suites {
		if !c.active[i] || c.failure[i] != nil {
			continue
		}
		if f := c.suites[i].Checks.Run(ev); f != nil {
			f.Seq, f.T = ev.Seq, ev.T
			c.failure[i] = f
			c.pending--
		}
	}
}

// results are the outcomes of the suites that ran, in order.
func (c *conformance) results() []assert.SuiteResult {
	var out []assert.SuiteResult
	for i, s := range c.suites {
		if !c.active[i] {
			continue
		}
		r := assert.SuiteResult{Suite: s.ID, Status: assert.StatusPassed}
		if f := c.failure[i]; f != nil {
			g := *f
			r.Status, r.Failure = assert.StatusFailed, &g
		}
		out = append(out, r)
	}
	return out
}

// errReused marks a Request whose id is in flight.
var errReused = errors.New("request id reused while its call is open")

// effectEvent turns a step of the Effect RPC timeline into a protocol event
// for the conformance checks.
func (c *conformance) effectEvent(r *RPCEvent) {
	if !c.busy() {
		return
	}
	pe := &c.ev
	*pe = protocol.Event{Seq: r.Seq, T: r.T, Conn: r.Conn, Dir: r.Dir, Protocol: protocol.EffectRPC}
	if call := r.Call; call != nil {
		c.call = protocol.Call{Protocol: protocol.EffectRPC, Conn: call.Conn, ID: call.ID, Method: call.Method, RequestSeq: call.RequestSeq,
			Chunks: call.Chunks, Acks: call.Acks, Interrupted: call.Interrupted, Outcome: protocol.Outcome(call.Outcome), EndSeq: call.EndSeq}
		pe.Call, pe.ID, pe.Method = &c.call, call.ID, call.Method
	}
	m := r.Message
	switch {
	case m == nil && r.Err != nil:
		pe.Kind, pe.Err, pe.Raw = protocol.KindDecodeError, r.Err, r.Raw
	case m == nil:
		pe.Kind, pe.ClosedBy = protocol.KindEnd, c.closedBy[r.Conn]
	default:
		pe.ID = m.ID
		switch m.Tag {
		case t3.TagRequest:
			pe.Kind, pe.Method, pe.Reused = protocol.KindRequest, m.Method, errors.Is(r.Err, errReused)
		case t3.TagChunk:
			pe.Kind = protocol.KindChunk
		case t3.TagAck:
			pe.Kind = protocol.KindAck
		case t3.TagInterrupt:
			pe.Kind = protocol.KindInterrupt
		case t3.TagExit:
			pe.Kind = protocol.KindResponse
		default:
			pe.Kind = protocol.KindNotification
		}
		pe.Late = r.Err == nil && r.Call == nil && pe.Kind != protocol.KindNotification && pe.Kind != protocol.KindRequest
	}
	c.observe(pe)
}

// effectDecoder is the Correlator as the router's decoder of Effect RPC
// WebSockets. The engine ends its calls itself (ServerStopped, End), in the
// order the scenario checks need, so Stop does nothing here.
type effectDecoder struct{ corr *Correlator }

func (d effectDecoder) Feed(ev *bundle.Event, emit protocol.Emit) {
	if ev.Kind == bundle.KindWSClose {
		emit(&protocol.Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: ev.Dir, Protocol: protocol.EffectRPC, Kind: protocol.KindClose, Code: ev.Code, Abnormal: ev.Err != ""})
	}
	d.corr.Feed(ev)
}

func (effectDecoder) Stop(*bundle.Event, string, protocol.Emit) {}
