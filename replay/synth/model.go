package synth

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model/anthropic"
)

// Model-call faults: a Claude CLI's call of its model (Anthropic's Messages
// API over HTTP) broken in one way, each failing one conformance check.
const (
	ModelFine            = ""                          // a streamed answer that calls Bash, answered in the next request
	ModelMalformedEvent  = "model-bad-event"           // a delta's data is not JSON
	ModelOutOfOrder      = "model-out-of-order"        // a delta before its block's start
	ModelCutStream       = "model-cut-stream"          // the stream ends before message_stop
	ModelOverloaded      = "model-overloaded"          // 529 overloaded_error
	ModelMissingResult   = "model-missing-tool-result" // the next request does not answer the tool_use
	ModelReusedID        = "model-reused-id"           // a second call answered with the first's ids
	ModelWrongStopReason = "model-wrong-stop-reason"   // a tool_use that says end_turn
	ModelUnofferedTool   = "model-unoffered-tool"      // a tool_use of a tool the request does not offer
	ModelCassetteMiss    = "model-cassette-miss"       // a model cassette's miss: 400 with X-Wireproof-Cassette: miss
	modelAnswerID        = "msg_synth0001"
	modelToolUseID       = "toolu_synth0001"
	modelSecondAnswerID  = "msg_synth0002"
)

// ModelChecks names the check each model-call fault fails.
var ModelChecks = map[string]string{
	ModelMalformedEvent:  assert.CheckModelSSEEvent,
	ModelOutOfOrder:      assert.CheckModelSSEOrder,
	ModelCutStream:       assert.CheckModelStreamComplete,
	ModelOverloaded:      assert.CheckModelAPIError,
	ModelMissingResult:   assert.CheckModelToolResult,
	ModelReusedID:        assert.CheckModelIDUnique,
	ModelWrongStopReason: assert.CheckModelStopReason,
	ModelUnofferedTool:   assert.CheckModelToolOffered,
	ModelCassetteMiss:    assert.CheckModelCassetteMiss,
}

// ModelCalls returns the HTTP exchanges (connections conn1 and conn2) of
// two model calls of one conversation, as the recording proxy records
// them: the first answered with a Bash tool_use, the second carrying its
// tool_result and answered with text. fault breaks them (ModelChecks); it
// also returns the index of the event where the fault's check fails (-1
// for ModelFine).
func ModelCalls(conn1, conn2, fault string) ([]bundle.Event, int) {
	tools := []anthropic.Tool{{Name: "Bash", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	user := anthropic.Message{Role: anthropic.RoleUser, Content: anthropic.Content{{Type: anthropic.BlockText, Text: "Run curl --fail --silent " + GateURL}}}
	use := anthropic.Block{Type: anthropic.BlockToolUse, ID: modelToolUseID, Name: "Bash", Input: json.RawMessage(`{"command":"curl --fail --silent ` + GateURL + `"}`)}
	first := &anthropic.Response{ID: modelAnswerID, Type: "message", Role: anthropic.RoleAssistant, Model: "claude-sonnet-4-6",
		Content: []anthropic.Block{use}, StopReason: anthropic.StopToolUse, Usage: anthropic.Usage{InputTokens: 20, OutputTokens: 12}}
	result := anthropic.Message{Role: anthropic.RoleUser, Content: anthropic.Content{{Type: anthropic.BlockToolResult, ToolUseID: modelToolUseID, Content: anthropic.Content{{Type: anthropic.BlockText, Text: Secret}}}}}
	second := &anthropic.Response{ID: modelSecondAnswerID, Type: "message", Role: anthropic.RoleAssistant, Model: "claude-sonnet-4-6",
		Content: []anthropic.Block{{Type: anthropic.BlockText, Text: Secret}}, StopReason: anthropic.StopEndTurn, Usage: anthropic.Usage{InputTokens: 40, OutputTokens: 4}}
	switch fault {
	case ModelMissingResult:
		result.Content = anthropic.Content{{Type: anthropic.BlockText, Text: "no result"}}
	case ModelReusedID:
		second.ID = modelAnswerID
	case ModelWrongStopReason:
		first.StopReason = anthropic.StopEndTurn
	case ModelUnofferedTool:
		first.Content[0].Name = "Shell"
	}
	req1 := mustJSON(anthropic.Request{Model: "claude-sonnet-4-6", MaxTokens: 32000, Stream: true, Tools: tools, Messages: []anthropic.Message{user}})
	assistant := anthropic.Message{Role: anthropic.RoleAssistant, Content: first.Content}
	req2 := mustJSON(anthropic.Request{Model: "claude-sonnet-4-6", MaxTokens: 32000, Stream: true, Tools: tools, Messages: []anthropic.Message{user, assistant, result}})

	var evs []bundle.Event
	decides := -1
	x1 := modelExchange{conn: conn1, req: req1, status: 200, ctype: "text/event-stream; charset=utf-8", res: sseBody(anthropic.Events(first, nil))}
	switch fault {
	case ModelMalformedEvent:
		x1.res = bytes.Replace(x1.res, []byte(`"partial_json":""}}`), []byte(`"partial_json":`), 1)
	case ModelOutOfOrder:
		evs := anthropic.Events(first, nil)
		evs[2], evs[3] = evs[3], evs[2] // a delta before content_block_start
		x1.res = sseBody(evs)
	case ModelCutStream:
		x1.res = sseBody(anthropic.Events(first, nil)[:4])
		x1.endErr = "unexpected EOF"
	case ModelOverloaded:
		x1.status, x1.ctype, x1.res = anthropic.StatusOverloaded, "application/json", []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	case ModelCassetteMiss:
		x1.status, x1.ctype, x1.miss = 400, "application/json", true
		x1.res = []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"wireproof cassette: no recorded model call matches POST /v1/messages (1 messages, 1 tools); closest recorded: idle-1.zst model-h1 (seq 40); first difference: messages[0].content[0].text: recorded \"Run curl\", the client sent \"Run wget\""}}`)
	}
	evs = append(evs, x1.events()...)
	switch fault {
	case ModelMalformedEvent, ModelOutOfOrder, ModelCutStream, ModelOverloaded, ModelWrongStopReason, ModelUnofferedTool, ModelCassetteMiss:
		decides = len(evs) - 1 // the first answer's end
	}
	x2 := modelExchange{conn: conn2, req: req2, status: 200, ctype: "text/event-stream; charset=utf-8", res: sseBody(anthropic.Events(second, nil))}
	evs = append(evs, x2.events()...)
	switch fault {
	case ModelMissingResult:
		decides = len(evs) - len(x2.events()) + 1 // the second request's body
	case ModelReusedID:
		decides = len(evs) - 1
	}
	return evs, decides
}

// modelExchange is one model call's HTTP exchange.
type modelExchange struct {
	conn, ctype, endErr string
	req, res            []byte
	status              int
	miss                bool // answered by a model cassette's miss
}

// events records the exchange as the proxy does: the request and its body,
// the response head, its body in two chunks, the end.
func (x modelExchange) events() []bundle.Event {
	half := len(x.res) / 2
	head := map[string][]string{"Content-Type": {x.ctype}}
	if x.miss {
		head["X-Wireproof-Cassette"] = []string{"miss"}
	}
	return []bundle.Event{
		{Kind: bundle.KindHTTPRequest, Conn: x.conn, Method: "POST", URL: "/v1/messages?beta=true",
			Header: map[string][]string{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(x.req))}, "X-Api-Key": {"[REDACTED]"}, "Anthropic-Version": {"2023-06-01"}}},
		{Kind: bundle.KindHTTPBody, Conn: x.conn, Dir: bundle.DirClientToServer, Body: bundle.Text(x.req)},
		{Kind: bundle.KindHTTPResponse, Conn: x.conn, Status: x.status, Header: head},
		{Kind: bundle.KindHTTPBody, Conn: x.conn, Dir: bundle.DirServerToClient, Body: bundle.Text(x.res[:half])},
		{Kind: bundle.KindHTTPBody, Conn: x.conn, Dir: bundle.DirServerToClient, Body: bundle.Text(x.res[half:])},
		{Kind: bundle.KindHTTPEnd, Conn: x.conn, Size: int64(len(x.res)), Err: x.endErr},
	}
}

// sseBody writes events as the API streams them.
func sseBody(evs []anthropic.Event) []byte {
	var buf bytes.Buffer
	w := anthropic.NewStreamWriter(&buf)
	for _, ev := range evs {
		if err := w.Write(ev); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
}

// modelCalls adds ModelCalls beside the run, labelling the event where the
// fault's check fails.
func (b *builder) modelCalls(fault string) {
	conn1, conn2 := fmt.Sprintf("h%d", b.http+1), fmt.Sprintf("h%d", b.http+2)
	b.http += 2
	evs, at := ModelCalls(conn1, conn2, fault)
	for i, ev := range evs {
		if seq := b.add(ev); i == at {
			b.label(LabelFault, seq)
		}
	}
}
