package triage

import (
	"fmt"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/protocol/effectrpc"
)

// protocolEvent is the Tap's hook for the protocol package's decoders: the
// calls of JSON-RPC 2.0 (stdio lines, WebSocket, HTTP) and of the Claude
// CLI's stream-json (a provider's control requests, tool_use → tool_result,
// turns) become the timeline's RPC calls beside Effect RPC's, decoded once,
// by the decoders the conformance suite judges. HTTP exchanges have their
// own list (Timeline.HTTP); Effect RPC comes through onRPC.
func (b *builder) protocolEvent(pe *protocol.Event) {
	b.noteSide(pe)
	if pe.Protocol == protocol.HTTP || pe.Protocol == protocol.EffectRPC {
		return
	}
	switch pe.Kind {
	case protocol.KindDecodeError:
		b.problem(pe, pe.Err.Error(), pe.Raw)
		return
	case protocol.KindRequest:
		if pe.Call == nil || pe.Reused {
			b.problem(pe, fmt.Sprintf("request %s reuses id %s while in flight", pe.Method, pe.ID), pe.Body)
			return
		}
		rc := &RPCCall{Protocol: pe.Protocol, Conn: pe.Conn, ID: pe.ID, Method: pe.Method, StartSeq: pe.Seq, StartT: pe.T, Outcome: effectrpc.OutcomeOpen,
			Payload: b.body(bundle.Text(pe.Body))}
		if _, open := b.pcalls[pe.Call]; !open {
			b.pcalls[pe.Call] = rc
			b.tl.Calls = append(b.tl.Calls, rc)
			b.noteCall(pe.Seq, rc)
		}
	case protocol.KindResponse, protocol.KindEnd:
		rc := b.pcalls[pe.Call]
		if pe.Call == nil || rc == nil {
			switch {
			case pe.Kind != protocol.KindResponse || pe.Late:
			case string(pe.RawID) == "null":
				b.problem(pe, "error response with id null (to a request that could not be read)", pe.Body)
			default:
				b.problem(pe, fmt.Sprintf("response for id %s, which is not in flight", pe.ID), pe.Body)
			}
			return
		}
		delete(b.pcalls, pe.Call)
		b.noteCall(pe.Seq, rc)
		rc.Ended, rc.EndSeq, rc.EndT, rc.Outcome = true, pe.Seq, pe.T, effectrpc.Outcome(pe.Call.Outcome)
		if pe.Kind == protocol.KindResponse {
			rc.Exit = b.body(bundle.Text(pe.Body))
			if pe.Err != nil {
				rc.Reason = pe.Err.Error() // answered as an HTTP error (JSON-RPC over HTTP)
			}
		} else {
			rc.Reason = "no response"
			if pe.Why != "" {
				rc.Reason += ": " + pe.Why
			}
		}
	case protocol.KindChunk, protocol.KindAck:
		if rc := b.pcalls[pe.Call]; rc != nil {
			b.noteCall(pe.Seq, rc)
			rc.Chunks, rc.Acks = pe.Call.Chunks, pe.Call.Acks
		}
	}
	if len(pe.Invalid) > 0 {
		name := string(pe.Protocol)
		if pe.Protocol == protocol.JSONRPC {
			name = "JSON-RPC 2.0"
		}
		b.problem(pe, fmt.Sprintf("invalid %s: %v", name, pe.Invalid), pe.Body)
	}
}

// problem lists a protocol violation or an undecodable message with the
// RPC errors, on the lane of the event that carried it.
func (b *builder) problem(pe *protocol.Event, what string, raw []byte) {
	b.tl.RPCErrors = append(b.tl.RPCErrors, Entry{Seq: pe.Seq, T: pe.T, Kind: b.cur.Kind, Lane: laneOf(b.cur.Kind), Conn: pe.Conn,
		Summary: clipLine(what+": "+string(raw), b.maxSummary)})
}
