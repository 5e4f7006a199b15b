package synth

import (
	"encoding/json"
	"sort"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
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
	"truncated": {Check: assert.CheckStreamDelivered, At: LabelCompleted, stopAt: "completed", inject: func(*builder) {}},
	"subscription-ended": {Check: assert.CheckStreamDelivered, At: LabelFault, stopAt: "delegated", inject: func(b *builder) {
		b.label(LabelFault, b.send(bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagExit, RequestID: b.subID(), Exit: &effectrpc.Exit{Tag: effectrpc.ExitSuccess, Value: json.RawMessage("null")}}))
		b.teardown()
	}},
	"server-defect": {Check: assert.CheckStreamDelivered, At: LabelFault, stopAt: "delegated", inject: func(b *builder) {
		b.label(LabelFault, b.send(bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagDefect, Defect: json.RawMessage(`"Unexpected end of JSON input"`)}))
		b.teardown()
	}},
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
	e := replay.NewEngine(nil)
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
