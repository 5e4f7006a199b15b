package assert

import (
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/protocol"
)

// The model checks judge OpenAI's Responses API (the Codex CLI's model
// calls, Protocol OpenAI) as they judge the Messages API: the stream's
// grammar (model-sse-event, model-sse-order), its end (model-stream-complete:
// response.completed), errors (model-api-error), function_call ↔
// function_call_output (model-tool-result: in each request's input, and
// across requests: an answer's function_call no later request answers
// before the bundle ends), ids (model-id-unique: the
// response's, its items', its call_ids) and tools offered
// (model-tool-offered: a function, or a namespace's function, of the
// request). model-stop-reason has no Responses counterpart (a response has
// no stop_reason) and judges Messages answers only.

// responsesOrder is what model-sse-order expects of a Responses stream.
const responsesOrder = "response.created, then each output item's added, deltas and done events, then response.completed"

// isModelProtocol reports a protocol whose calls are model calls.
func isModelProtocol(p protocol.Name) bool { return p == protocol.Anthropic || p == protocol.OpenAI }

// responsesIncomplete is model-stream-complete's failure for a Responses
// stream that did not reach response.completed.
func responsesIncomplete(ev *protocol.Event, m *protocol.ModelCall) *Failure {
	seen := "the stream ended"
	if m.Response == nil {
		seen += " before response.created"
	} else {
		seen += fmt.Sprintf(" after %d output item(s), without response.completed", len(m.Response.Output))
	}
	if ev.Err != nil {
		seen += " (" + ev.Err.Error() + ")"
	}
	return &Failure{Expected: "a stream that ends with response.completed", Seen: seen + " in the answer to model call " + ev.ID}
}

// responsesNeverAnswered is model-tool-result's failure for a function
// call of a Responses answer that no later request answered before the
// bundle ended (the decoder's End event without a call).
func responsesNeverAnswered(ev *protocol.Event) *Failure {
	return &Failure{Expected: "each function_call of an answer answered by a function_call_output in a later request",
		Seen: strings.Join(ev.Model.Unanswered, "; ") + " before the bundle ended"}
}
