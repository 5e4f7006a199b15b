package synth

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

// LabelFault is the seq of the event a driver-level fault injected.
const LabelFault = "fault"

// Fault is one way to break a passing run: a flipped projection field, a
// dropped or an added event. Check is the check it must fail and At the label
// (in Script.At) of the event that decides it.
type Fault struct {
	Name      string
	Check     string
	At        string
	Scenarios []assert.Scenario // the scenarios it applies to; empty means all

	stopAt string         // the run ends after this point, with inject's events
	inject func(*builder) // events added at stopAt

	// breakAt: the run goes on, passing, after break's events are added at
	// this point: a protocol fault the conformance suite fails on, beside a
	// scenario that passes.
	breakAt string
	breaks  func(*builder)
}

var all = assert.Scenarios()

// faults by name. Two checks have no fault, because no event stream can fail
// them through the engine: no-failed-run and child-result-kept run on the
// completing observation after the invariants, which fail first on the same
// observation (parent-not-failed sees a failed run; terminal-child-has-secret
// sees a completed child without the secret). Their nearest reachable forms
// are parent-failed and wrong-result.
var faults = map[string]Fault{
	"parent-failed":         {Check: assert.CheckParentNotFailed, At: LabelDelegated},
	"early-child":           {Check: assert.CheckNoEarlyTerminalChild, At: LabelDelegated},
	"wrong-result":          {Check: assert.CheckTerminalChildSecret, At: LabelCompleted},
	"no-release":            {Check: assert.CheckGateUsed, At: LabelFinal},
	"wrong-path":            {Check: assert.CheckDelegationPath, At: LabelFinal, Scenarios: []assert.Scenario{assert.ScenarioIdle, assert.ScenarioActive, assert.ScenarioNested}},
	"no-notification":       {Check: assert.CheckTypedNotification, At: LabelFinal},
	"user-message-delivery": {Check: assert.CheckSingleUserMessage, At: LabelFinal},
	"double-notification":   {Check: assert.CheckSingleNotification, At: LabelFinal},
	"child-cancelled":       {Check: assert.CheckChildCompleted, At: LabelFinal, Scenarios: []assert.Scenario{assert.ScenarioIdle, assert.ScenarioActive, assert.ScenarioNested}},
	"unacknowledged":        {Check: assert.CheckDeliveryAcknowledged, At: LabelFinal, Scenarios: []assert.Scenario{assert.ScenarioIdle, assert.ScenarioActive, assert.ScenarioNested}},
	"no-owner":              {Check: assert.CheckNestedOwner, At: LabelFinal, Scenarios: []assert.Scenario{assert.ScenarioNested}},
	"no-grandchild":         {Check: assert.CheckNestedGrandchild, At: LabelNestedRead, Scenarios: []assert.Scenario{assert.ScenarioNested}},
	"lost-nested-result":    {Check: assert.CheckNestedResult, At: LabelNestedRead, Scenarios: []assert.Scenario{assert.ScenarioNested}},
	"stale-background":      {Check: assert.CheckNoStaleBackground, At: LabelClosing},
	"extra-run":             {Check: assert.CheckActiveSingleRun, At: LabelClosing, Scenarios: []assert.Scenario{assert.ScenarioActive}},
	"no-parent-gate":        {Check: assert.CheckActiveParentGate, At: LabelClosing, Scenarios: []assert.Scenario{assert.ScenarioActive}},
	"no-continuation":       {Check: assert.CheckContinuationRun, At: LabelClosing, Scenarios: []assert.Scenario{assert.ScenarioIdle, assert.ScenarioNative, assert.ScenarioNested}},
	"restart-unreadable":    {Check: assert.CheckRestartRead, At: LabelRestartRead},
	"restart-lost-ack":      {Check: assert.CheckRestartAcknowledgement, At: LabelRestartRead},
	"restart-unfinished":    {Check: assert.CheckRestartRunsCompleted, At: LabelRestartRead},
	"restart-extra-run":     {Check: assert.CheckRestartNoExtraRun, At: LabelRestartRead},
	"server-crash": {Check: assert.CheckServerAlive, At: LabelFault, stopAt: "delegated", inject: func(b *builder) {
		b.label(LabelFault, b.server(bundle.KindProcExit, bundle.Event{Code: 1, Err: "exit status 1"}))
		b.add(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1006, Err: "EOF"})
	}},
	"deadline": {Check: assert.CheckDeadline, At: LabelFault, stopAt: "delegated", inject: func(b *builder) {
		b.label(LabelFault, b.mark(replay.MarkDeadline, map[string]int{"timeoutSeconds": 240}))
		b.teardown()
	}},
	"interrupted": {Check: assert.CheckInterrupted, At: LabelFault, stopAt: "delegated", inject: func(b *builder) {
		b.label(LabelFault, b.mark(replay.MarkInterrupted, nil))
		b.teardown()
	}},
	"setup-failed": {Check: assert.CheckSetup, At: LabelFault, stopAt: "setup", inject: func(b *builder) {
		b.label(LabelFault, b.mark(replay.MarkSetupFailed, map[string]string{"step": "connect", "error": "websocket: bad handshake (401 auth_invalid)"}))
		b.teardown()
	}},
	// Protocol faults (protocol-conformance), each on a connection of its
	// own beside the run's, which passes: a second Effect RPC socket
	// reading a thread no check reads, an MCP exchange, an HTTP GET.
	"unknown-answer": {Check: assert.CheckAnswersRequest, At: LabelFault, breakAt: "delegated", breaks: func(b *builder) {
		b.sideSocket()
		b.label(LabelFault, b.sendOn("ws2", bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagExit, RequestID: effectrpc.NumberID(77), Exit: &effectrpc.Exit{Tag: effectrpc.ExitSuccess, Value: json.RawMessage("null")}}))
		b.closeSide(1000)
	}},
	"reused-id": {Check: assert.CheckIDNotReused, At: LabelFault, breakAt: "delegated", breaks: func(b *builder) {
		b.sideSocket()
		read := effectrpc.Message{Tag: effectrpc.TagRequest, ID: effectrpc.NumberID(5), Method: t3.MethodGetProjection, Payload: mustJSON(map[string]string{"threadId": sideThread})}
		b.sendOn("ws2", bundle.DirClientToServer, read)
		b.label(LabelFault, b.sendOn("ws2", bundle.DirClientToServer, read))
		b.sendOn("ws2", bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagExit, RequestID: effectrpc.NumberID(5), Exit: &effectrpc.Exit{Tag: effectrpc.ExitSuccess, Value: json.RawMessage("null")}})
		b.closeSide(1000)
	}},
	"unacked-chunk": {Check: assert.CheckStreamAcked, At: LabelFault, breakAt: "delegated", breaks: func(b *builder) {
		b.sideSocket()
		b.sendOn("ws2", bundle.DirClientToServer, effectrpc.Message{Tag: effectrpc.TagRequest, ID: effectrpc.NumberID(5), Method: t3.MethodSubscribe, Payload: mustJSON(map[string]string{"threadId": sideThread})})
		item := mustJSON([]any{map[string]any{"kind": "event", "sequence": 1, "event": map[string]any{"id": "evt-side", "threadId": sideThread, "type": "thread.updated", "payload": map[string]any{}}}})
		b.sendOn("ws2", bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagChunk, RequestID: effectrpc.NumberID(5), Values: item})
		b.label(LabelFault, b.sendOn("ws2", bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagChunk, RequestID: effectrpc.NumberID(5), Values: item}))
		b.sendOn("ws2", bundle.DirClientToServer, effectrpc.Message{Tag: effectrpc.TagInterrupt, RequestID: effectrpc.NumberID(5)})
		b.sendOn("ws2", bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagExit, RequestID: effectrpc.NumberID(5), Exit: &effectrpc.Exit{Tag: effectrpc.ExitFailure, Cause: json.RawMessage(`{"_tag":"Interrupt"}`)}})
		b.closeSide(1000)
	}},
	"unanswered-interrupt": {Check: assert.CheckInterruptAnswer, At: LabelFault, breakAt: "delegated", breaks: func(b *builder) {
		b.sideSocket()
		b.sendOn("ws2", bundle.DirClientToServer, effectrpc.Message{Tag: effectrpc.TagRequest, ID: effectrpc.NumberID(5), Method: t3.MethodSubscribe, Payload: mustJSON(map[string]string{"threadId": sideThread})})
		b.sendOn("ws2", bundle.DirClientToServer, effectrpc.Message{Tag: effectrpc.TagInterrupt, RequestID: effectrpc.NumberID(5)})
		b.label(LabelFault, b.add(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws2", Dir: bundle.DirServerToClient, Code: 1000}))
		b.add(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws2", Dir: bundle.DirClientToServer, Code: 1000})
	}},
	"bad-jsonrpc": {Check: assert.CheckJSONRPCEnvelope, At: LabelFault, breakAt: "delegated", breaks: func(b *builder) {
		req := `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`
		b.http++
		conn := fmt.Sprintf("h%d", b.http)
		b.add(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: conn, Method: "POST", URL: "/mcp",
			Header: map[string][]string{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(req))}, "Mcp-Session-Id": {"mcp-session-1"}}})
		b.label(LabelFault, b.add(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(req))}))
		res := `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`
		b.add(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: 200, Header: map[string][]string{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(res))}}})
		b.add(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(res))})
		b.add(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: conn, Size: int64(len(res))})
	}},
	"short-body": {Check: assert.CheckHTTPBodyLength, At: LabelFault, breakAt: "delegated", breaks: func(b *builder) {
		b.http++
		conn := fmt.Sprintf("h%d", b.http)
		b.add(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: conn, Method: "GET", URL: "/api/health"})
		b.add(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: 200, Header: map[string][]string{"Content-Type": {"application/json"}, "Content-Length": {"24"}}})
		b.add(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"ok":true}`))})
		b.label(LabelFault, b.add(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: conn, Size: 11}))
	}},
	"bad-close-code": {Check: assert.CheckWebSocketCloseOK, At: LabelFault, breakAt: "delegated", breaks: func(b *builder) {
		b.sideSocket()
		b.label(LabelFault, b.add(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws2", Dir: bundle.DirClientToServer, Code: 1004}))
		b.add(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws2", Dir: bundle.DirServerToClient, Code: 1000})
	}},
	// Model calls (a Claude CLI's calls of its model), one fault each.
	ModelMalformedEvent:  modelFault(ModelMalformedEvent),
	ModelOutOfOrder:      modelFault(ModelOutOfOrder),
	ModelCutStream:       modelFault(ModelCutStream),
	ModelOverloaded:      modelFault(ModelOverloaded),
	ModelMissingResult:   modelFault(ModelMissingResult),
	ModelReusedID:        modelFault(ModelReusedID),
	ModelWrongStopReason: modelFault(ModelWrongStopReason),
	ModelUnofferedTool:   modelFault(ModelUnofferedTool),
	ModelCassetteMiss:    modelFault(ModelCassetteMiss),
	// A Codex app-server's stdio (the JSON-RPC dialect without "jsonrpc").
	CodexUnanswered: codexFault(CodexUnanswered),
	"truncated":     {Check: assert.CheckStreamDelivered, At: LabelCompleted, stopAt: "completed", inject: func(*builder) {}},
	"subscription-ended": {Check: assert.CheckStreamDelivered, At: LabelFault, stopAt: "delegated", inject: func(b *builder) {
		b.label(LabelFault, b.send(bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagExit, RequestID: b.subID(), Exit: &effectrpc.Exit{Tag: effectrpc.ExitSuccess, Value: json.RawMessage("null")}}))
		b.teardown()
	}},
	"server-defect": {Check: assert.CheckStreamDelivered, At: LabelFault, stopAt: "delegated", inject: func(b *builder) {
		b.label(LabelFault, b.send(bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagDefect, Defect: json.RawMessage(`"Unexpected end of JSON input"`)}))
		b.teardown()
	}},
}

// modelFault breaks the run's protocol with two model calls beside it,
// broken by fault (ModelCalls).
func modelFault(fault string) Fault {
	return Fault{Check: ModelChecks[fault], At: LabelFault, breakAt: "delegated", breaks: func(b *builder) { b.modelCalls(fault) }}
}

// sideThread is the thread the side socket of a protocol fault reads: one
// no check reads.
const sideThread = "thread-side-0001"

// sideSocket opens a second Effect RPC socket, ws2, beside the run's.
func (b *builder) sideSocket() {
	b.add(bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws2", URL: t3.PathWebSocket + "?orchestrationProtocol=2&wsTicket=[REDACTED]"})
}

// closeSide closes ws2 from the client, then the server, with code.
func (b *builder) closeSide(code int) {
	b.add(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws2", Dir: bundle.DirClientToServer, Code: code})
	b.add(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws2", Dir: bundle.DirServerToClient, Code: code})
}

// subID is the id of the parent's subscription: the second request.
func (b *builder) subID() effectrpc.RequestID {
	if b.o.StringIDs {
		return effectrpc.StringID(1)
	}
	return effectrpc.NumberID(1)
}

// teardown stops the server as the driver does after a failure.
func (b *builder) teardown() {
	b.server(bundle.KindProcSignal, bundle.Event{Name: "SIGTERM"})
	b.server(bundle.KindProcExit, bundle.Event{Code: -1, Name: "SIGTERM"})
}

// Faults lists every fault, sorted by name.
func Faults() []Fault {
	out := make([]Fault, 0, len(faults))
	for name, f := range faults {
		f.Name = name
		if len(f.Scenarios) == 0 {
			f.Scenarios = all
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Recorded runs the engine over s, as the live driver does, and appends its
// verdict as a verdict event, then the driver's final shutdown if the server
// is still up. It returns the events with the verdict.
func Recorded(s Script) ([]bundle.Event, error) {
	return RecordedBy(s, delivery.EngineOptions(nil))
}

// RecordedBy is Recorded with the verdict of an engine with opts (a
// scenario of a test's own, such as Inapplicable's).
func RecordedBy(s Script, opts *replay.EngineOptions) ([]bundle.Event, error) {
	e := replay.NewEngine(opts)
	for i := range s.Events {
		if err := e.Feed(&s.Events[i]); err != nil {
			return nil, err
		}
	}
	v := e.Verdict()
	events := append([]bundle.Event(nil), s.Events...)
	last := events[len(events)-1]
	events = append(events, bundle.Event{Seq: last.Seq + 1, T: last.T + 1e6, Kind: bundle.KindVerdict, Body: bundle.Text(mustJSON(v))})
	return events, nil
}
