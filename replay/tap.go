package replay

import (
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/protocol/effectrpc"
)

// Tap receives what the engine's decoders make of a whole bundle, for tools
// that show it (triage's timeline, inspect --calls, the report) from the
// same pass, and the same decode, as the verdict. Unlike OnEvent, which
// stops with the checks at the run's end mark, a Tap sees every connection
// to the end of the bundle: after the cut-off the decoders go on for the Tap
// alone, and the checks, and so the verdict, are exactly what they are
// without one. Calls still open when the bundle ends are ended for the Tap
// at the bundle's last event.
//
// Every event and its slices are valid only during the call; calls
// (RPCEvent.Call, protocol.Event.Call) are the decoders' own and may be
// used as keys until they end.
type Tap struct {
	// RPC receives every step of the Effect RPC calls the Correlator
	// rebuilds: each message with its call, the ends without a message
	// (socket closed, server stopped, bundle ended) and what could not be
	// decoded.
	RPC func(*effectrpc.Step)
	// Protocol receives every protocol event of the router's decoders
	// (JSON-RPC 2.0, stream-json, HTTP; decode errors included). Effect RPC
	// connections appear here only by their closes: their calls come
	// through RPC.
	Protocol func(*protocol.Event)
}

// tapState is the engine's side of a Tap.
type tapState struct {
	Tap
	last    bundle.Event   // seq and t of the last event fed
	tapping bool           // feeding the decoders for the Tap alone: the checks are done
	ending  bool           // Verdict is ending the calls the bundle cut off
	ended   bool           // the Tap's end of the bundle was delivered
	held    []bundle.Event // events after the cut-off, held while the checks are undecided
}

// rpcStep is the Correlator's callback when a Tap is set: the checks first,
// as without one, then the Tap.
func (e *Engine) rpcStep(r *effectrpc.Step) {
	t := e.tap
	if !t.tapping {
		e.onRPC(r)
	}
	if t.RPC == nil {
		return
	}
	if !t.ending || r.Seq == t.last.Seq {
		t.RPC(r)
		return
	}
	h := *r
	h.Seq, h.T = t.last.Seq, t.last.T
	var end *uint64
	if r.Call != nil && r.Ended {
		end = &r.Call.EndSeq
	}
	t.atEnd(r.Seq, end, func() { t.RPC(&h) })
}

// atEnd delivers what Verdict ends at the last event that mattered to the
// checks (seq) as the Tap sees it: at the bundle's last event, the call's
// end (endSeq, if the end is there) moved with it while deliver runs.
func (t *tapState) atEnd(seq uint64, endSeq *uint64, deliver func()) {
	if endSeq != nil && *endSeq == seq {
		*endSeq = t.last.Seq
		defer func() { *endSeq = seq }()
	}
	deliver()
}

// tapProtocol hands a protocol event to the Tap, after the checks.
func (e *Engine) tapProtocol(pe *protocol.Event) {
	t := e.tap
	if t.Protocol == nil {
		return
	}
	if !t.ending || pe.Seq == t.last.Seq {
		t.Protocol(pe)
		return
	}
	h := *pe
	h.Seq, h.T = t.last.Seq, t.last.T
	var end *uint64
	if pe.Call != nil && pe.Kind == protocol.KindEnd {
		end = &pe.Call.EndSeq
	}
	t.atEnd(pe.Seq, end, func() { t.Protocol(&h) })
}

// tapFeed takes an event after the cut-off, once the checks have handled
// it. While they are undecided the decoders' state is theirs (a server that
// stops ends the calls open at the cut-off, and the verdict may depend on
// it), so the event is held; once they are decided, what is held and the
// event go to the decoders for the Tap alone.
func (e *Engine) tapFeed(ev *bundle.Event) {
	t := e.tap
	if !e.decided() {
		h := *ev
		h.Detach()
		t.held = append(t.held, h)
		return
	}
	e.tapRelease()
	e.tapRoute(ev)
}

// tapRelease feeds the held events to the decoders.
func (e *Engine) tapRelease() {
	t := e.tap
	for i := range t.held {
		e.tapRoute(&t.held[i])
	}
	t.held = nil
}

// tapRoute feeds one event to the decoders, as wire does before the
// cut-off, for the Tap alone.
func (e *Engine) tapRoute(ev *bundle.Event) {
	t := e.tap
	t.tapping = true
	defer func() { t.tapping = false }()
	switch ev.Kind {
	case bundle.KindWSOpen, bundle.KindWSMessage, bundle.KindWSClose, bundle.KindStdioLine,
		bundle.KindHTTPRequest, bundle.KindHTTPResponse, bundle.KindHTTPBody, bundle.KindHTTPEnd,
		bundle.KindProcStart: // a stdio channel's process: its argv says what it speaks
		e.router.Feed(ev)
	case bundle.KindProcSignal:
		if ev.Conn == ServerConn {
			e.router.ServerStopping(ev) // what its processes leave unanswered now is the stop's
		}
	case bundle.KindProcExit:
		e.router.Feed(ev)
		if ev.Conn == ServerConn {
			e.router.Stop(ev, "the server stopped")
			e.corr.ServerStopped(ev)
		}
	}
}

// tapEnd ends, for the Tap, what is still open when the bundle ends, once
// Verdict has decided (and so ended what the checks needed ended).
func (e *Engine) tapEnd() {
	t := e.tap
	t.ending = false
	if t.ended {
		return
	}
	t.ended = true
	e.tapRelease()
	t.tapping = true
	defer func() { t.tapping = false }()
	e.router.Stop(&t.last, e.endWhy())
	e.corr.End(&t.last)
}
