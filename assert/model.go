package assert

import (
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/protocol"
)

// The conformance checks of model calls (Anthropic's Messages API and
// OpenAI's Responses API, decoded by protocol's HTTP decoder; responses.go
// words them for the Responses API): the event grammar of a streamed answer, the
// tool protocol across requests, unique ids, the stop reason, the tools
// offered, and errors. Each judges one model call's Request or Response
// event (Event.Model).
var modelChecks = Checks[*protocol.Event]{
	{ID: CheckModelCassetteMiss, Message: "The server sent the model something the cassette never saw", Stage: StageEvent, Test: modelCassetteMiss},
	{ID: CheckModelSSEEvent, Message: "A model stream event is malformed", Stage: StageEvent, Test: modelProblem(anthropic.ProblemMalformed)},
	{ID: CheckModelSSEOrder, Message: "A model stream's events are out of order", Stage: StageEvent, Test: modelProblem(anthropic.ProblemOrder)},
	{ID: CheckModelStreamComplete, Message: "A model stream ended before message_stop", Stage: StageEvent, Test: modelStreamComplete},
	{ID: CheckModelAPIError, Message: "The model API answered an error", Stage: StageEvent, Test: modelAPIError},
	{ID: CheckModelToolResult, Message: "A tool_use is not answered by exactly one tool_result", Stage: StageEvent, Test: modelToolResult},
	{ID: CheckModelIDUnique, Message: "A model answer reuses an id", Stage: StageEvent, Test: modelIDUnique},
	{ID: CheckModelStopReason, Message: "A model answer's stop_reason disagrees with its content", Stage: StageEvent, Test: modelStopReason},
	{ID: CheckModelToolOffered, Message: "A model answer calls a tool the request does not offer", Stage: StageEvent, Test: modelToolOffered},
}

// modelAnswer returns the facts of a model call's Response event, nil for
// any other event.
func modelAnswer(ev *protocol.Event) *protocol.ModelCall {
	if !isModelProtocol(ev.Protocol) || ev.Kind != protocol.KindResponse || ev.Model == nil {
		return nil
	}
	return ev.Model
}

// modelProblem: a streamed answer's events follow the API's grammar (the
// first problem of the kind is shown).
func modelProblem(kind string) func(*protocol.Event) *Failure {
	return func(ev *protocol.Event) *Failure {
		m := modelAnswer(ev)
		if m == nil {
			return nil
		}
		for _, p := range m.Problems {
			if p.Kind != kind {
				continue
			}
			expected := "every event's data a JSON event object of the event's type"
			if kind == anthropic.ProblemOrder {
				expected = "message_start, then each content block's start, deltas and stop, then message_delta and message_stop"
				if ev.Protocol == protocol.OpenAI {
					expected = responsesOrder
				}
			}
			return &Failure{Expected: expected, Seen: fmt.Sprintf("in the answer to model call %s: %s", ev.ID, p.Error())}
		}
		return nil
	}
}

// modelStreamComplete: a streamed answer the API began (2xx) ends with
// message_stop. An answer the recording cut short is not judged, nor one
// that ended in an error event (model-api-error judges it).
func modelStreamComplete(ev *protocol.Event) *Failure {
	m := modelAnswer(ev)
	if m == nil || (ev.Method != protocol.MethodMessages && ev.Method != protocol.MethodResponses) || !m.Stream || m.Status < 200 || m.Status > 299 || m.Complete || m.Cut || m.ClientGone || m.APIError != nil {
		return nil
	}
	if ev.Method == protocol.MethodResponses {
		return responsesIncomplete(ev, m)
	}
	seen := "the stream ended"
	if m.Message == nil {
		seen += " before message_start"
	} else {
		seen += fmt.Sprintf(" after %d content block(s), without message_stop", len(m.Message.Content))
	}
	if ev.Err != nil {
		seen += " (" + ev.Err.Error() + ")"
	}
	return &Failure{Expected: "a stream that ends with message_stop", Seen: seen + " in the answer to model call " + ev.ID}
}

// modelCassetteMiss: a model cassette answered every model call from its
// recording (a miss is also an API error: this check comes first, so that
// a replayed run names it).
func modelCassetteMiss(ev *protocol.Event) *Failure {
	m := modelAnswer(ev)
	if m == nil || !m.CassetteMiss {
		return nil
	}
	seen := fmt.Sprintf("model call %s matched no recorded call", ev.ID)
	if m.APIError != nil {
		seen = m.APIError.Message + " (model call " + ev.ID + ")"
	}
	return &Failure{Expected: "a model request the cassette recorded", Seen: seen}
}

// modelAPIError: a model call is answered, not refused (an error status, or
// an error event in the stream).
func modelAPIError(ev *protocol.Event) *Failure {
	m := modelAnswer(ev)
	if m == nil || m.APIError == nil {
		return nil
	}
	return &Failure{Expected: "an answer to the model call", Seen: fmt.Sprintf("HTTP %d %s: %s (model call %s)", m.Status, m.APIError.Type, m.APIError.Message, ev.ID)}
}

// modelToolResult: in the conversation a model request carries, every
// tool_use is answered by exactly one tool_result in the next message, and
// every tool_result answers a tool_use of the message before it; a
// Responses answer's function_call is answered by a later request before
// the bundle ends.
func modelToolResult(ev *protocol.Event) *Failure {
	if !isModelProtocol(ev.Protocol) || (ev.Kind != protocol.KindRequest && ev.Kind != protocol.KindEnd) || ev.Model == nil || len(ev.Model.Unanswered) == 0 {
		return nil
	}
	if ev.Kind == protocol.KindEnd {
		return responsesNeverAnswered(ev)
	}
	if ev.Protocol == protocol.OpenAI {
		return &Failure{Expected: "each function_call answered by exactly one function_call_output after it",
			Seen: strings.Join(ev.Model.Unanswered, "; ") + " (model call " + ev.ID + ")"}
	}
	return &Failure{Expected: "each tool_use answered by exactly one tool_result in the message after it",
		Seen: strings.Join(ev.Model.Unanswered, "; ") + " (model call " + ev.ID + ")"}
}

// modelIDUnique: no two answers share a message id or a tool_use id (only
// answers received whole count: a retry repeats a failed one).
func modelIDUnique(ev *protocol.Event) *Failure {
	m := modelAnswer(ev)
	if m == nil || len(m.Reused) == 0 {
		return nil
	}
	return &Failure{Expected: "ids no earlier answer had", Seen: strings.Join(m.Reused, "; ") + " in model call " + ev.ID}
}

// modelStopReason: a whole answer says why it stopped, and says tool_use
// exactly when it calls a tool (max_tokens and pause_turn may cut a
// tool_use short).
func modelStopReason(ev *protocol.Event) *Failure {
	m := modelAnswer(ev)
	if m == nil || m.Message == nil || !m.Complete || m.Cut || len(m.Problems) > 0 {
		return nil
	}
	uses := len(m.Message.ToolUses())
	sr := m.Message.StopReason
	var seen string
	switch {
	case sr == "":
		seen = "no stop_reason"
	case sr == anthropic.StopToolUse && uses == 0:
		seen = "stop_reason tool_use without a tool_use block"
	case uses > 0 && sr != anthropic.StopToolUse && sr != anthropic.StopMaxTokens && sr != anthropic.StopPauseTurn:
		seen = fmt.Sprintf("stop_reason %s with %d tool_use block(s)", sr, uses)
	default:
		return nil
	}
	return &Failure{Expected: "stop_reason tool_use exactly when the answer calls a tool", Seen: seen + " in the answer to model call " + ev.ID}
}

// modelToolOffered: an answer calls only tools its request offers.
func modelToolOffered(ev *protocol.Event) *Failure {
	m := modelAnswer(ev)
	if m == nil || len(m.Unoffered) == 0 {
		return nil
	}
	return &Failure{Expected: "tool_use blocks naming tools of the request's tools", Seen: strings.Join(m.Unoffered, "; ") + " (model call " + ev.ID + ")"}
}
