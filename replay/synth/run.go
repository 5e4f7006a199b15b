package synth

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

// projection is the state of a thread as the synthetic server reports it,
// with fields the checks do not read (thread, attempts, checkpoints) so that
// decoding must skip what it does not know.
type projection struct {
	Thread          json.RawMessage  `json:"thread"`
	Runs            []t3.Run         `json:"runs"`
	Subagents       []t3.Subagent    `json:"subagents"`
	Messages        []t3.Message     `json:"messages"`
	TurnItems       []t3.TurnItem    `json:"turnItems"`
	ProviderThreads []providerThread `json:"providerThreads"`
	Attempts        []map[string]any `json:"attempts"`
	Checkpoints     []map[string]any `json:"checkpoints"`
	UpdatedAt       string           `json:"updatedAt"`
}

type providerThread struct {
	ID                     string            `json:"id"`
	ProviderSessionID      string            `json:"providerSessionId"`
	PendingBackgroundTasks []json.RawMessage `json:"pendingBackgroundTasks,omitempty"`
}

// clone deep-copies p through JSON, so later steps do not alter earlier ones.
func (p *projection) clone() *projection {
	var c projection
	if err := json.Unmarshal(mustJSON(p), &c); err != nil {
		panic(err)
	}
	return &c
}

func str(s string) *string { return &s }

func (b *builder) newProjection(thread string) *projection {
	p := &projection{
		Thread:      mustJSON(map[string]any{"id": thread, "title": "Background verification: " + string(b.o.Scenario), "runtimeMode": "full-access"}),
		Runs:        []t3.Run{{ID: "run-1", Ordinal: 1, Status: t3.RunRunning}},
		Subagents:   []t3.Subagent{},
		Messages:    []t3.Message{{ID: "msg-user-1", RunID: "run-1", Role: t3.RoleUser, Text: "This is a live background-delivery verification."}},
		TurnItems:   []t3.TurnItem{{ID: "item-1", Type: t3.ItemUserMessage, RunID: "run-1", Text: "This is a live background-delivery verification."}},
		Attempts:    []map[string]any{{"id": "attempt-1", "runId": "run-1"}},
		Checkpoints: []map[string]any{},
		UpdatedAt:   "2026-01-01T00:00:00.000Z",
	}
	for i := 0; i < b.o.Filler; i++ {
		p.TurnItems = append(p.TurnItems, t3.TurnItem{ID: "filler-" + itoa(i), Type: t3.ItemCommandExecution, RunID: "run-1", Text: strings.Repeat("x", b.o.FillerBytes)})
	}
	return p
}

func itoa(i int) string { return string(mustJSON(i)) }

// stopped reports whether the fault ends the run at this point.
func (b *builder) stopped(point string) bool {
	f, ok := faults[b.o.Fault]
	if ok && f.breakAt == point {
		f.breaks(b) // a protocol fault: the run goes on
		return false
	}
	if !ok || f.stopAt != point {
		return false
	}
	f.inject(b)
	b.label(LabelLast, uint64(len(b.s.Events)-1))
	return true
}

func (b *builder) is(fault string) bool { return b.o.Fault == fault }

// run builds the whole run.
func (b *builder) run() {
	b.add(bundle.Event{Kind: bundle.KindHeader, Body: bundle.Text(mustJSON(header(b.o)))})
	b.server(bundle.KindProcStart, bundle.Event{Attrs: mustJSON(map[string]any{"argv": []string{"t3", "start", "--bootstrap-fd", "3", "--log-level", "debug"}, "pid": 4242})})
	b.server(bundle.KindProcLog, bundle.Event{Type: bundle.TypeStdout, Body: bundle.Text([]byte(t3.ReadyLogLine))})
	b.server(bundle.KindProcReady, bundle.Event{Body: bundle.Text([]byte(t3.ReadyLogLine))})
	b.httpPost(t3.PathToken, 200, `{"access_token":"[REDACTED]","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":3600,"scope":"*"}`)
	b.label(LabelRunMark, b.mark(replay.MarkRun, info(b.o.Scenario)))
	b.httpPost(t3.PathProjectsMutate, 200, `{"projectId":"project-0001"}`)
	b.httpPost(t3.PathWebSocketTicket, 200, `{"ticket":"[REDACTED]","expiresAt":"2026-01-01T00:01:00.000Z"}`)
	if b.stopped("setup") {
		return
	}
	b.add(bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: t3.PathWebSocket + "?orchestrationProtocol=2&wsTicket=[REDACTED]"})

	p := b.newProjection(ThreadID)
	launch := b.request(t3.MethodLaunchThread, map[string]any{"commandId": "cmd-1", "threadId": ThreadID, "projectId": "project-0001",
		"title": "Background verification: " + string(b.o.Scenario), "modelSelection": map[string]string{"instanceId": "fixture", "model": "scripted"},
		"runtimeMode": "full-access", "interactionMode": "default", "workspaceStrategy": map[string]string{"type": "root"},
		"initialMessage": map[string]any{"text": "This is a live background-delivery verification.", "attachments": []any{}}})
	b.label(LabelLaunchExit, b.exit(launch, map[string]any{"threadId": ThreadID, "projection": p, "resumed": false}))
	sub := b.request(t3.MethodSubscribe, map[string]string{"threadId": ThreadID})
	b.chunk(sub, map[string]any{"kind": "snapshot", "snapshotSequence": 1, "projection": p})
	obs := func(label, eventType string) {
		seq := b.read(sub, ThreadID, p.clone(), eventType)
		if label != "" {
			b.label(label, seq)
		}
	}

	// The parent delegates.
	switch b.o.Scenario {
	case assert.ScenarioNative:
		p.Subagents = []t3.Subagent{{ID: "task-1", Origin: t3.OriginProviderNative, Status: t3.SubagentRunning}}
		p.ProviderThreads = []providerThread{{ID: "pt-1", ProviderSessionID: "ps-1", PendingBackgroundTasks: []json.RawMessage{json.RawMessage(`{"id":"bg-1","command":"curl"}`)}}}
	default:
		origin := t3.OriginAppOwned
		if b.is("wrong-path") {
			origin = t3.OriginProviderNative
		}
		p.Subagents = []t3.Subagent{{ID: "task-1", Origin: origin, ChildThreadID: ChildThreadID, Status: t3.SubagentRunning}}
		p.ProviderThreads = []providerThread{{ID: "pt-1", ProviderSessionID: "ps-1"}}
	}
	p.TurnItems = append(p.TurnItems, t3.TurnItem{ID: "item-2", Type: t3.ItemSubagent, RunID: "run-1"})
	if b.is("parent-failed") {
		p.Runs[0].Status = t3.RunFailed
	}
	if b.is("early-child") {
		p.Subagents[0].Status, p.Subagents[0].Result = t3.SubagentCompleted, str(Secret)
	}
	obs(LabelDelegated, "subagent.updated")
	if b.stopped("delegated") {
		return
	}
	var child effectrpc.RequestID
	childP := b.newProjection(ChildThreadID)
	if b.o.Scenario == assert.ScenarioNested {
		child = b.request(t3.MethodSubscribe, map[string]string{"threadId": ChildThreadID})
		b.chunk(child, map[string]any{"kind": "snapshot", "snapshotSequence": 1, "projection": childP})
	}
	b.label(LabelGateRequest, b.gate(bundle.KindGateRequest, GatePath, 0, ""))
	for i := 0; i < b.o.Polls; i++ {
		obs("", "turn-item.updated")
	}
	if b.o.Scenario == assert.ScenarioActive {
		if !b.is("no-parent-gate") {
			b.label(LabelParentGate, b.gate(bundle.KindGateRequest, GatePath+"/parent", 0, ""))
		}
	} else {
		// The parent ends its first turn.
		p.Runs[0].Status = t3.RunCompleted
		p.Messages = append(p.Messages, t3.Message{ID: "msg-asst-1", RunID: "run-1", Role: t3.RoleAssistant, Text: "PARENT_RELEASED"})
		p.TurnItems = append(p.TurnItems, t3.TurnItem{ID: "item-3", Type: t3.ItemAssistantMessage, RunID: "run-1", Text: "PARENT_RELEASED"})
		obs("", "run.updated")
	}
	if b.o.Scenario == assert.ScenarioNested {
		childP.Runs[0].Status = t3.RunCompleted
		childP.Subagents = []t3.Subagent{{ID: "task-g1", Origin: t3.OriginAppOwned, ChildThreadID: "thread-grandchild-0001", Status: t3.SubagentRunning}}
		b.read(child, ChildThreadID, childP.clone(), "subagent.updated")
	}
	if !b.is("no-release") {
		b.label(LabelRelease, b.gate(bundle.KindGateRelease, GatePath, 200, Secret))
	}
	if b.stopped("released") {
		return
	}
	if b.o.Scenario == assert.ScenarioNested {
		childP.Subagents[0].Status, childP.Subagents[0].Result = t3.SubagentCompleted, str(Secret)
		childP.Subagents[0].CompletionDelivery = &t3.CompletionDelivery{State: t3.DeliveryAcknowledged, ObservedByRunID: "run-2"}
		childP.Runs = append(childP.Runs, t3.Run{ID: "run-2", Ordinal: 2, Status: t3.RunCompleted})
		childP.Messages = append(childP.Messages, t3.Message{ID: "msg-child-2", RunID: "run-2", Role: t3.RoleAssistant, Text: Secret})
		b.read(child, ChildThreadID, childP.clone(), "subagent.updated")
	}

	// The child (or the native task) completes.
	task := &p.Subagents[0]
	if !b.is("no-release") {
		task.Status, task.Result = t3.SubagentCompleted, str(Secret)
		if b.is("wrong-result") {
			task.Result = str("Injected dependency failure")
		}
		if b.is("child-cancelled") {
			task.Status, task.Result = t3.SubagentCancelled, str("cancelled after "+Secret)
		}
		if task.Origin == t3.OriginAppOwned {
			task.CompletionDelivery = &t3.CompletionDelivery{State: t3.DeliveryPending}
		}
	}
	obs(LabelCompleted, "subagent.updated")
	if b.stopped("completed") {
		return
	}

	// Delivery: a continuation run (or, in active, the same run) gets the notification.
	run := &p.Runs[0]
	if b.o.Scenario != assert.ScenarioActive && !b.is("no-continuation") {
		p.Runs = append(p.Runs, t3.Run{ID: "run-2", Ordinal: 2, Status: t3.RunRunning})
		run = &p.Runs[1]
	}
	task = &p.Subagents[0]
	if task.CompletionDelivery != nil {
		task.CompletionDelivery = &t3.CompletionDelivery{State: t3.DeliveryDelivered, ObservedByRunID: run.ID}
	}
	if !b.is("no-notification") {
		p.TurnItems = append(p.TurnItems, t3.TurnItem{ID: "item-4", Type: t3.ItemNotification, RunID: run.ID, Source: "task", Outcome: "completed", Summary: "background task completed"})
	}
	if b.is("double-notification") {
		p.TurnItems = append(p.TurnItems, t3.TurnItem{ID: "item-4b", Type: t3.ItemNotification, RunID: run.ID, Source: "task", Outcome: "completed", Summary: "background task completed"})
	}
	if b.is("user-message-delivery") {
		p.TurnItems = append(p.TurnItems, t3.TurnItem{ID: "item-4u", Type: t3.ItemUserMessage, RunID: run.ID, Text: "<task-notification>"})
	}
	p.ProviderThreads[0].PendingBackgroundTasks = nil
	if b.is("stale-background") {
		p.ProviderThreads[0].PendingBackgroundTasks = []json.RawMessage{json.RawMessage(`{"id":"bg-stale","command":"sleep 600"}`)}
	}
	obs(LabelDelivered, "turn-item.updated")
	if b.o.Scenario == assert.ScenarioActive {
		b.gate(bundle.KindGateRelease, GatePath+"/parent", 200, "Completion notification delivered. Read task_status now.")
	}

	// The parent acknowledges and the run ends.
	if task.CompletionDelivery != nil && !b.is("unacknowledged") {
		task.CompletionDelivery = &t3.CompletionDelivery{State: t3.DeliveryAcknowledged, ObservedByRunID: run.ID}
	}
	p.Messages = append(p.Messages, t3.Message{ID: "msg-asst-2", RunID: run.ID, Role: t3.RoleAssistant, Text: "ACK:" + Secret})
	p.TurnItems = append(p.TurnItems, t3.TurnItem{ID: "item-5", Type: t3.ItemAssistantMessage, RunID: run.ID, Text: "ACK:" + Secret})
	run.Status = t3.RunCompleted
	if b.is("extra-run") {
		p.Runs = append(p.Runs, t3.Run{ID: "run-2", Ordinal: 2, Status: t3.RunCompleted})
	}
	if b.is("no-owner") {
		task.ChildThreadID = ""
	}
	final := p.clone()
	obs(LabelFinal, "run.updated")
	b.label(LabelClosing, b.s.At[LabelFinal])

	if b.o.Scenario == assert.ScenarioNested {
		if b.is("no-grandchild") {
			childP.Subagents = []t3.Subagent{}
		}
		if b.is("lost-nested-result") {
			childP.Subagents[0].Result = nil
		}
		id := b.request(t3.MethodGetProjection, map[string]string{"threadId": ChildThreadID})
		b.label(LabelNestedRead, b.exit(id, childP.clone()))
		b.label(LabelClosing, b.s.At[LabelNestedRead])
		b.endStream(child)
	}
	b.endStream(sub)

	// Restart on the same home and read the thread over HTTP.
	b.label(LabelRestartMark, b.mark(replay.MarkRestart, nil))
	b.server(bundle.KindProcSignal, bundle.Event{Name: "SIGTERM"})
	b.add(bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1006, Err: "EOF"})
	b.server(bundle.KindProcExit, bundle.Event{Code: 0})
	b.server(bundle.KindProcStart, bundle.Event{Attrs: mustJSON(map[string]any{"argv": []string{"t3", "start"}, "pid": 4243})})
	b.label(LabelRestartReady, b.server(bundle.KindProcReady, bundle.Event{Body: bundle.Text([]byte(t3.ReadyLogLine))}))
	status := 200
	switch {
	case b.is("restart-unreadable"):
		status = 500
	case b.is("restart-lost-ack"):
		final.Messages = final.Messages[:len(final.Messages)-1]
	case b.is("restart-unfinished"):
		final.Runs[len(final.Runs)-1].Status = t3.RunRunning
	case b.is("restart-extra-run"):
		final.Runs = append(final.Runs, t3.Run{ID: "run-9", Ordinal: 9, Status: t3.RunCompleted})
	}
	body := mustJSON(map[string]any{"snapshotSequence": 42, "projection": final})
	if status != 200 {
		body = []byte(`{"code":"internal","message":"database is locked"}`)
	}
	b.label(LabelRestartRead, b.httpGet(t3.PathThreadsPrefix+ThreadID, status, body))
	b.label(LabelLast, b.s.At[LabelRestartRead])
}

// endStream interrupts a subscription as the verifier does once it has what it needs.
func (b *builder) endStream(id effectrpc.RequestID) {
	b.send(bundle.DirClientToServer, effectrpc.Message{Tag: effectrpc.TagInterrupt, RequestID: id})
	b.send(bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagExit, RequestID: id,
		Exit: &effectrpc.Exit{Tag: effectrpc.ExitFailure, Cause: json.RawMessage(`[{"_tag":"Interrupt","fiberId":27}]`)}})
}

// header is Header with the provider driver o names, if any.
func header(o Options) bundle.Header {
	h := Header(o.Scenario)
	if o.Provider != "" {
		h.Manifest.Options = map[string]string{assert.OptionProviderDriver: string(o.Provider)}
	}
	return h
}

// Header is the bundle header of a synthetic run.
func Header(scenario assert.Scenario) bundle.Header {
	return bundle.Header{Format: bundle.FormatVersion, Tool: "wireproof synth", Started: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Manifest: bundle.Manifest{Scenario: string(scenario), Provider: "fixture", Model: "scripted"}}
}
