package triage

import (
	"fmt"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/replay"
)

// jsonRPCCalls rebuilds the JSON-RPC 2.0 calls of stdio lines (a command
// recorded with `record --stdio`) as the timeline's RPC calls, with the
// protocol package's decoder, the one replay's conformance suite judges.
type jsonRPCCalls struct {
	b      *builder
	router *protocol.Router
	calls  map[*protocol.Call]*RPCCall
}

func newJSONRPCCalls(b *builder) *jsonRPCCalls {
	j := &jsonRPCCalls{b: b, calls: map[*protocol.Call]*RPCCall{}}
	j.router = protocol.NewRouter(protocol.JSONRPCRoutes(protocol.NewJSONRPCDecoder())[:1], j.event)
	return j
}

func (j *jsonRPCCalls) feed(ev *bundle.Event) {
	if ev.Kind == bundle.KindStdioLine {
		j.router.Feed(ev)
	}
}

func (j *jsonRPCCalls) end(at *bundle.Event) { j.router.Stop(at, "the bundle ended") }

func (j *jsonRPCCalls) event(pe *protocol.Event) {
	b := j.b
	switch pe.Kind {
	case protocol.KindDecodeError:
		b.tl.RPCErrors = append(b.tl.RPCErrors, Entry{Seq: pe.Seq, T: pe.T, Kind: bundle.KindStdioLine, Lane: LaneServer, Conn: pe.Conn,
			Summary: clipLine(pe.Err.Error()+": "+string(pe.Raw), b.maxSummary)})
		return
	case protocol.KindRequest:
		if pe.Call == nil {
			j.problem(pe, fmt.Sprintf("request %s reuses id %s while in flight", pe.Method, pe.ID))
			return
		}
		rc := &RPCCall{Conn: pe.Conn, ID: pe.ID, Method: pe.Method, StartSeq: pe.Seq, StartT: pe.T, Outcome: replay.OutcomeOpen,
			Payload: b.body(bundle.Text(pe.Body))}
		j.calls[pe.Call] = rc
		b.tl.Calls = append(b.tl.Calls, rc)
	case protocol.KindResponse, protocol.KindEnd:
		rc := j.calls[pe.Call]
		if pe.Call == nil || rc == nil {
			if pe.Kind == protocol.KindResponse {
				j.problem(pe, fmt.Sprintf("response for id %s, which is not in flight", pe.ID))
			}
			return
		}
		delete(j.calls, pe.Call)
		rc.Ended, rc.EndSeq, rc.EndT, rc.Outcome = true, pe.Seq, pe.T, replay.Outcome(pe.Call.Outcome)
		if pe.Kind == protocol.KindResponse {
			rc.Exit = b.body(bundle.Text(pe.Body))
		} else {
			rc.Reason = "no response: the bundle ended"
		}
	}
	if len(pe.Invalid) > 0 {
		j.problem(pe, fmt.Sprintf("invalid JSON-RPC 2.0: %v", pe.Invalid))
	}
}

// problem lists a protocol violation with the undecodable messages.
func (j *jsonRPCCalls) problem(pe *protocol.Event, what string) {
	j.b.tl.RPCErrors = append(j.b.tl.RPCErrors, Entry{Seq: pe.Seq, T: pe.T, Kind: bundle.KindStdioLine, Lane: LaneServer, Conn: pe.Conn,
		Summary: clipLine(what+": "+string(pe.Body), j.b.maxSummary)})
}
