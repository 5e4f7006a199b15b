package protocol

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/model/openai"
)

// OpenAI's Responses API over HTTP, as the Codex CLI calls its model, is
// decoded beside Anthropic's (anthropic.go) into the same ModelCall facts:
// a POST to /v1/responses is a model call (Protocol OpenAI, method
// responses), its request the body's input items, its answer the response
// a text/event-stream body's events assemble into (openai.Assembler) or the
// JSON body (a response, or an error in OpenAI's shape). A function_call
// of an answer is matched, by its call_id, to the function_call_output of
// the first later request that carries it (ModelCall.Answers); one no
// request ever answers is reported when the bundle ends (an End event of
// protocol OpenAI without a call, its Model.Unanswered naming it:
// unansweredCalls). The response, item and call ids of whole answers are
// remembered so that one answered twice is seen.

// responsesRequest decodes a Responses request body.
func (m *modelExchange) responsesRequest(body []byte) {
	f := &m.facts
	var req openai.Request
	if err := json.Unmarshal(body, &req); err != nil {
		f.RequestErr = "the request body is not a Responses request: " + err.Error()
		return
	}
	m.oreq = &req
	f.Stream, f.Model, f.Messages, f.Tools = req.Stream, req.Model, len(req.Input), len(req.Functions())
	f.Unanswered = callProtocol(req.Input)
	f.Answers = m.calls.outputs(req.Input)
}

// callProtocol lists how a request's input breaks the function call
// protocol: every function_call is answered by exactly one
// function_call_output with its call_id after it, and every
// function_call_output answers a function_call before it (the API refuses
// a request with a call it has no output for).
func callProtocol(in openai.Input) []string {
	var out []string
	calls := map[string]int{}   // call_id -> its item's index
	answers := map[string]int{} // call_id -> outputs seen
	var order []string
	for k, it := range in {
		switch it.Type {
		case openai.ItemFunctionCall:
			if j, ok := calls[it.CallID]; ok {
				out = append(out, fmt.Sprintf("function_call %s (%s) of item %d repeats the call_id of item %d", it.CallID, it.Name, k, j))
				continue
			}
			calls[it.CallID] = k
			order = append(order, it.CallID)
		case openai.ItemFunctionCallOutput:
			if _, ok := calls[it.CallID]; !ok {
				out = append(out, fmt.Sprintf("function_call_output of item %d answers %s, which no function_call before it made", k, it.CallID))
				continue
			}
			answers[it.CallID]++
		}
	}
	for _, id := range order {
		if n := answers[id]; n != 1 {
			k := calls[id]
			out = append(out, fmt.Sprintf("function_call %s (%s) of item %d has %d function_call_outputs", id, in[k].Name, k, n))
		}
	}
	return out
}

// outputs matches the function_call_outputs of in to the pending calls
// they answer.
func (d *modelCalls) outputs(in openai.Input) []ToolAnswer {
	if len(d.pending) == 0 {
		return nil
	}
	var out []ToolAnswer
	for _, it := range in {
		if it.Type != openai.ItemFunctionCallOutput {
			continue
		}
		if a, ok := d.pending[it.CallID]; ok {
			delete(d.pending, it.CallID)
			out = append(out, a)
		}
	}
	return out
}

// responsesEnd fills a Responses call's answer into out (a Response
// event at the exchange's end).
func (d *modelCalls) responsesEnd(m *modelExchange, ev *bundle.Event, out *Event) {
	f := &m.facts
	switch {
	case m.oasm != nil:
		f.Response, f.Complete = m.oasm.Response(), m.oasm.Complete()
		if e := m.oasm.APIError(); e != nil {
			f.APIError = &anthropic.ErrorBody{Type: e.Type, Message: e.Message}
		}
		if f.Response != nil && m.oasm.Ended() != "" && !f.Complete && f.APIError == nil {
			f.APIError = &anthropic.ErrorBody{Type: m.oasm.Ended(), Message: "the response ended with status " + f.Response.Status}
		}
	case len(m.resBody) > 0:
		if f.Status >= 300 {
			if e := openai.ParseError(m.resBody); e != nil {
				f.APIError = &anthropic.ErrorBody{Type: e.Type, Message: e.Message}
			} else {
				f.APIError = &anthropic.ErrorBody{Type: http.StatusText(f.Status), Message: clipString(string(m.resBody), 200)}
			}
			break
		}
		var r openai.Response
		if json.Unmarshal(m.resBody, &r) == nil && r.Object == "response" {
			f.Response, f.Complete = &r, r.Status == openai.StatusCompleted
		} else {
			f.Problems = append(f.Problems, &anthropic.StreamError{Kind: anthropic.ProblemMalformed, Event: "body", Msg: "the JSON answer is not a response: " + clipString(string(m.resBody), 120)})
		}
	case f.Status >= 300:
		f.APIError = &anthropic.ErrorBody{Type: http.StatusText(f.Status), Message: "no body"}
	}
	if f.Response != nil && !f.Cut {
		f.Unoffered = uncalled(m.oreq, f.Response)
		if f.Complete && len(f.Problems) == 0 {
			f.Reused = d.rememberResponse(f.Response, m.call.Conn, ev.Seq)
		}
	}
	switch {
	// An error of the exchange after a whole answer (the CLI dropped the
	// connection once it had response.completed) does not undo the answer.
	case f.APIError != nil || (ev.Err != "" && !f.Complete) || len(f.Problems) > 0 || (m.sse && !f.Complete && !f.Cut):
		m.call.Outcome = OutcomeFailure
	default:
		m.call.Outcome = OutcomeSuccess
	}
	switch {
	case f.Response != nil:
		out.Body, _ = json.Marshal(f.Response)
	case f.APIError != nil:
		out.Body, _ = json.Marshal(openai.ErrorResponse{Error: openai.ErrorBody{Type: f.APIError.Type, Message: f.APIError.Message}})
	default:
		out.Body = m.resBody
	}
	facts := *f
	out.Model = &facts
}

// functionCalls lists a response's function calls.
func functionCalls(r *openai.Response) []openai.Item {
	var out []openai.Item
	for _, it := range r.Output {
		if it.Type == openai.ItemFunctionCall {
			out = append(out, it)
		}
	}
	return out
}

// uncalled lists the answer's function calls of a function the request
// does not offer (none when the request could not be read).
func uncalled(req *openai.Request, r *openai.Response) []string {
	if req == nil {
		return nil
	}
	var out []string
	for _, c := range functionCalls(r) {
		if !req.Offers(c.Namespace, c.Name) {
			name := c.Name
			if c.Namespace != "" {
				name = c.Namespace + "/" + c.Name
			}
			out = append(out, fmt.Sprintf("function_call %s calls %q", c.CallID, name))
		}
	}
	return out
}

// rememberResponse notes a whole answer's ids (the response's, its items',
// its calls' call_ids), and its calls as pending, and returns the ids an
// earlier answer had.
func (d *modelCalls) rememberResponse(r *openai.Response, conn string, seq uint64) []string {
	var reused []string
	note := d.noter(seq, &reused)
	note("response", r.ID)
	for _, it := range r.Output {
		note(it.Type, it.ID)
		if it.Type == openai.ItemFunctionCall {
			note("call", it.CallID)
			if it.CallID != "" {
				d.pending[it.CallID] = ToolAnswer{ToolUseID: it.CallID, Name: it.Name, Protocol: OpenAI, UseConn: conn, UseSeq: seq}
			}
		}
	}
	return reused
}

// unansweredCalls reports, when the decoding stops, the function calls of
// whole Responses answers that no later request answered: at the bundle's
// end one End event each (protocol OpenAI, no call; Model.Unanswered names
// the call and the answer that made it), in the order they were made. A
// stop at the server's exit (at is its proc.exit) reports none: the server
// stopping cut them off, not the client; nor does the end of a bundle cut
// short (report false: the answer may have come after the cut). Either way
// they are forgotten.
func (d *modelCalls) unansweredCalls(at *bundle.Event, report bool, emit Emit) {
	var calls []ToolAnswer
	for id, a := range d.pending {
		if a.Protocol == OpenAI {
			calls = append(calls, a)
			delete(d.pending, id)
		}
	}
	if at.Kind == bundle.KindProcExit || !report {
		return
	}
	sort.Slice(calls, func(i, j int) bool {
		if calls[i].UseSeq != calls[j].UseSeq {
			return calls[i].UseSeq < calls[j].UseSeq
		}
		return calls[i].ToolUseID < calls[j].ToolUseID
	})
	for _, a := range calls {
		emit(&Event{Seq: at.Seq, T: at.T, Conn: a.UseConn, Protocol: OpenAI, Kind: KindEnd, ID: a.ToolUseID, Method: MethodResponses,
			Model: &ModelCall{Path: "/v1/responses", Unanswered: []string{fmt.Sprintf("function_call %s (%s) of the answer to model call %s (seq %d) has no function_call_output in any later request", a.ToolUseID, a.Name, a.UseConn, a.UseSeq)}}})
	}
}
