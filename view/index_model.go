package view

import (
	"context"
	"slices"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
)

// onCall adds the calls of every decoder but Effect RPC's (which onRPC
// adds) from the replay session's Tap (the same decode as their checks) to
// the calls: a Claude CLI's model calls (Anthropic's Messages API) and a
// Codex CLI's (OpenAI's Responses API), JSON-RPC calls (MCP over HTTP, stdio,
// WebSocket) and the providers' stream-json calls (control requests,
// tool_use → tool_result, turns). Method is the timeline's ("messages",
// "tools/call", "turn"); a call that failed says why in Reason.
func (x *indexer) onCall(pe *protocol.Event) {
	if pe.Call == nil || pe.Protocol == protocol.EffectRPC || pe.Protocol == protocol.HTTP {
		return // Effect RPC: onRPC; an HTTP exchange is in the HTTP table
	}
	ix := x.ix
	i, ok := x.models[pe.Call]
	switch {
	case pe.Kind == protocol.KindRequest && !ok:
		i = int32(len(ix.Calls))
		x.models[pe.Call] = i
		method := pe.Method
		ix.Calls = append(ix.Calls, CallSpan{Index: int(i), Conn: pe.Conn, ID: pe.ID, Method: method, Seq: pe.Seq, T: pe.T, Outcome: string(protocol.OutcomeOpen), Protocol: string(pe.Protocol)})
		x.methods[method] = true
	case (pe.Kind == protocol.KindResponse || pe.Kind == protocol.KindEnd) && ok:
		delete(x.models, pe.Call)
		s := &ix.Calls[i]
		s.EndSeq, s.EndT, s.Outcome = pe.Seq, pe.T, string(pe.Call.Outcome)
		s.Reason = modelReason(pe)
	default:
		return
	}
	if x.done {
		return
	}
	if k := x.eventAt(pe.Seq); k >= 0 && !slices.Contains(ix.Events[k].Calls, i) {
		ix.Events[k].Calls = append(ix.Events[k].Calls, i)
	}
}

// modelReason says why a model call did not end well ("" if it did).
func modelReason(pe *protocol.Event) string {
	m := pe.Model
	switch {
	case pe.Kind == protocol.KindEnd:
		return clipLine("no answer: "+pe.Why, maxSummary)
	case m == nil:
		return ""
	case m.APIError != nil:
		return clipLine(m.APIError.Type+": "+m.APIError.Message, maxSummary)
	case len(m.Problems) > 0:
		return clipLine(m.Problems[0].Error(), maxSummary)
	case m.Stream && !m.Complete && !m.Cut && (pe.Method == protocol.MethodMessages || pe.Method == protocol.MethodResponses):
		why := "the stream ended before message_stop"
		if pe.Method == protocol.MethodResponses {
			why = "the stream ended before response.completed"
		}
		if pe.Err != nil {
			why += " (" + pe.Err.Error() + ")"
		}
		return clipLine(why, maxSummary)
	case pe.Err != nil:
		return clipLine(pe.Err.Error(), maxSummary)
	}
	return ""
}

// isModelProtocol reports a protocol of model calls.
func isModelProtocol(p protocol.Name) bool { return p == protocol.Anthropic || p == protocol.OpenAI }

// readModelCall re-reads the HTTP exchange of a model call through the same
// decoder as replay's and keeps its request body (Payload) and its answer,
// assembled from the stream (Exit).
func readModelCall(ctx context.Context, path string, c CallSpan) (*CallDetail, error) {
	d := &CallDetail{CallSpan: c}
	dec := protocol.NewHTTPDecoder(nil)
	emit := func(pe *protocol.Event) {
		if !isModelProtocol(pe.Protocol) || pe.Conn != c.Conn {
			return
		}
		switch pe.Kind {
		case protocol.KindRequest:
			d.Payload = payloadOf(append([]byte(nil), pe.Body...), false)
		case protocol.KindResponse:
			d.Exit = payloadOf(append([]byte(nil), pe.Body...), false)
		}
	}
	last := c.EndSeq
	if last == 0 {
		last = ^uint64(0)
	}
	err := scan(ctx, path, last, func(_ uint64, k bundle.Kind) bool { return k == bundle.KindHTTPBody }, func(ev *bundle.Event) bool {
		switch ev.Kind {
		case bundle.KindHTTPRequest, bundle.KindHTTPResponse, bundle.KindHTTPBody, bundle.KindHTTPEnd:
			if ev.Conn == c.Conn {
				dec.Feed(ev, emit)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}
