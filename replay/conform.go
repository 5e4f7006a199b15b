package replay

import (
	"errors"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/protocol/effectrpc"
)

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

// ConformanceSuite runs assert.Conformance on every bundle.
var ConformanceSuite = EventSuite{ID: assert.SuiteConformance, Checks: assert.Conformance}

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

// effectEvent turns a step of the Effect RPC timeline into a protocol event
// for the conformance checks.
func (c *conformance) effectEvent(r *effectrpc.Step) {
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
		pe.ID = m.Key()
		switch m.Tag {
		case effectrpc.TagRequest:
			pe.Kind, pe.Method, pe.Reused = protocol.KindRequest, m.Method, errors.Is(r.Err, effectrpc.ErrReused)
		case effectrpc.TagChunk:
			pe.Kind = protocol.KindChunk
		case effectrpc.TagAck:
			pe.Kind = protocol.KindAck
		case effectrpc.TagInterrupt:
			pe.Kind = protocol.KindInterrupt
		case effectrpc.TagExit:
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
type effectDecoder struct{ corr *effectrpc.Correlator }

func (d effectDecoder) Feed(ev *bundle.Event, emit protocol.Emit) {
	if ev.Kind == bundle.KindWSClose {
		emit(&protocol.Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: ev.Dir, Protocol: protocol.EffectRPC, Kind: protocol.KindClose, Code: ev.Code, Abnormal: ev.Err != ""})
	}
	d.corr.Feed(ev)
}

func (effectDecoder) Stop(*bundle.Event, string, protocol.Emit) {}
