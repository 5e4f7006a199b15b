package replay

import (
	"encoding/json"
	"fmt"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/t3"
)

// interesting reports whether projections of thread are read by any check:
// only those are decoded.
func (e *Engine) interesting(thread string) bool {
	return thread != "" && (thread == e.parentThread || thread == e.watchedChild || thread == e.nestedChild)
}

// onRPC receives the correlated RPC timeline.
func (e *Engine) onRPC(r *effectrpc.Step) {
	e.conf.effectEvent(r)
	if r.Err != nil {
		if e.conf.done && e.decided() {
			return // past the cut-off: nothing judges it
		}
		e.keepError(r.Seq, r.Conn, r.Err, r.Raw)
		return
	}
	call := r.Call
	if call == nil || e.decided() {
		return
	}
	if call.Method == t3.MethodLaunchThread && e.parentThread == "" && e.verificationRun() && call.ThreadID != "" && r.Message != nil && r.Message.Tag == effectrpc.TagRequest {
		e.parentThread = call.ThreadID // no run mark: the launched thread is the parent
	}
	at := &bundle.Event{Seq: r.Seq, T: r.T}
	if m := r.Message; m != nil {
		switch {
		case m.Tag == effectrpc.TagChunk && call.Method == t3.MethodSubscribe && e.interesting(call.ThreadID):
			e.streamItems(call, m.Values, at)
		case m.Tag == effectrpc.TagExit && m.Exit.Tag == effectrpc.ExitSuccess:
			e.exitValue(call, m, at)
		}
	}
	if r.Ended && call.Outcome != effectrpc.OutcomeSuccess || r.Ended && call.Method == t3.MethodSubscribe {
		e.callEnded(call, at)
	}
}

// streamItems observes the snapshot items of a subscribeThread chunk.
func (e *Engine) streamItems(call *effectrpc.Call, values json.RawMessage, at *bundle.Event) {
	if ps, ok := e.lean.snapshots(values); ok {
		for _, p := range ps {
			e.observe(SourceSnapshot, call.ThreadID, p, at)
		}
		return
	}
	var items []struct {
		Kind       string         `json:"kind"`
		Projection *t3.Projection `json:"projection"`
	}
	if err := json.Unmarshal(values, &items); err != nil {
		e.keepError(at.Seq, call.Conn, fmt.Errorf("subscribeThread chunk: %w", err), values)
		return
	}
	for _, it := range items {
		if it.Kind == t3.ItemKindSnapshot && it.Projection != nil {
			e.observe(SourceSnapshot, call.ThreadID, it.Projection, at)
		}
	}
}

// exitValue observes the projection in a successful launchThread or
// getThreadProjection answer m.
func (e *Engine) exitValue(call *effectrpc.Call, m *effectrpc.Message, at *bundle.Event) {
	value := m.Exit.Value
	switch call.Method {
	case t3.MethodLaunchThread:
		if !e.interesting(call.ThreadID) {
			return
		}
		if p, ok := e.lean.launchAnswer(value); ok {
			if p != nil {
				e.observe(SourceLaunch, call.ThreadID, p, at)
			}
			return
		}
		var v struct {
			ThreadID   string         `json:"threadId"`
			Projection *t3.Projection `json:"projection"`
		}
		if err := json.Unmarshal(value, &v); err != nil {
			e.keepError(at.Seq, call.Conn, fmt.Errorf("launchThread answer: %w", err), value)
			return
		}
		if v.Projection != nil {
			e.observe(SourceLaunch, call.ThreadID, v.Projection, at)
		}
	case t3.MethodGetProjection:
		if !e.interesting(call.ThreadID) {
			return
		}
		if p, ok := e.lean.getProjection(value); ok {
			e.observe(SourceGetProjection, call.ThreadID, p, at)
			return
		}
		var p t3.Projection
		if err := json.Unmarshal(value, &p); err != nil {
			e.keepError(at.Seq, call.Conn, fmt.Errorf("getThreadProjection answer: %w", err), value)
			return
		}
		e.observe(SourceGetProjection, call.ThreadID, &p, at)
	}
}

// callEnded judges calls that ended without an answer the checks can use.
//
// A call cut off with an unknown outcome (the socket dropped) is not judged at
// once: a server that dies drops its sockets before its exit is recorded, and
// the exit is the better reason. Nor is a call the client interrupted: the
// driver stops watching when it is interrupted or out of time, and its mark
// (interrupted, deadline) may be recorded after the server's answer to the
// Interrupt. The cut is kept and decides the run only if nothing else does
// first: at the driver's driver-error mark or at the end of the bundle.
func (e *Engine) callEnded(call *effectrpc.Call, at *bundle.Event) {
	if (call.Outcome == effectrpc.OutcomeUnknown || call.Outcome == effectrpc.OutcomeInterrupted || call.Interrupted) && e.pendingCut == nil {
		e.judgeCall(call, at)
		if e.phase == PhaseFailed {
			e.pendingCut, e.phase, e.failure = e.failure, e.pendingPhase, nil
		}
		return
	}
	e.judgeCall(call, at)
}

func (e *Engine) judgeCall(call *effectrpc.Call, at *bundle.Event) {
	e.pendingPhase = e.phase
	how := describeEnd(call)
	switch {
	case call.Method == t3.MethodLaunchThread && call.ThreadID == e.parentThread && e.phase == PhaseRunning:
		e.runEnd(assert.RunEnd{Launch: how}, at.Seq, at.T)
	case call.Method == t3.MethodSubscribe && call.ThreadID == e.parentThread && e.phase == PhaseRunning:
		e.runEnd(assert.RunEnd{Undelivered: "the parent's subscription " + how + " before delivery was proven; last seen: " + assert.Summary(e.lastParent)}, at.Seq, at.T)
	case call.Method == t3.MethodGetProjection && call.ThreadID == e.parentThread && e.phase == PhaseRunning:
		e.runEnd(assert.RunEnd{Undelivered: "getThreadProjection of the parent " + how + "; last seen: " + assert.Summary(e.lastParent)}, at.Seq, at.T)
	case call.Method == t3.MethodGetProjection && call.ThreadID == e.nestedChild && e.phase == PhaseNestedRead:
		e.nestedRead(assert.NestedRead{Suite: e.suite, Failed: "getThreadProjection of the child " + how}, at)
	}
}

// describeEnd says how a call ended, in words.
func describeEnd(c *effectrpc.Call) string {
	switch c.Outcome {
	case effectrpc.OutcomeSuccess:
		return fmt.Sprintf("ended normally after %d chunk(s)", c.Chunks)
	case effectrpc.OutcomeFailure:
		s := "failed"
		if c.Cause != nil {
			s += ": " + c.Cause.String()
		}
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		return s
	case effectrpc.OutcomeInterrupted:
		return "was interrupted: " + c.Reason
	case effectrpc.OutcomeDefect:
		return "failed by " + c.Reason
	default:
		return "ended with an unknown outcome: " + c.Reason
	}
}

// observe runs the checks on one projection of a thread.
func (e *Engine) observe(src ObservationSource, thread string, p *t3.Projection, at *bundle.Event) {
	if e.decided() {
		return
	}
	if e.onObservation != nil {
		e.notifyObservation(src, thread, p, at)
	}
	if thread != e.parentThread {
		if thread == e.watchedChild || thread == e.nestedChild {
			e.ms.NestedChildFinished = assert.NestedChildFinished(p)
		}
		if thread == e.nestedChild && e.phase == PhaseNestedRead {
			e.nestedRead(assert.NestedRead{Suite: e.suite, Child: p}, at)
		}
		return
	}
	if e.phase != PhaseRunning {
		return
	}
	e.lastParent = p
	if f := assert.BackgroundDelivery.Observation.Run(assert.Observed{Suite: e.suite, Projection: p, Released: e.released}); f != nil {
		e.fail(f, at.Seq, at.T, thread)
		return
	}
	if e.scenario != assert.ScenarioActive {
		e.ms.ParentFinished = assert.ParentFinished(p)
	}
	if assert.Delivered(p) {
		e.ms.Delivered = true
	}
	if e.scenario == assert.ScenarioNested && e.watchedChild == "" {
		e.watchedChild = assert.NestedChildThread(p)
	}
	if !e.suite.Completed(p) {
		return
	}
	e.final, e.finalAt = p, at
	e.runCount, e.ackIDs = len(p.Runs), assert.AcknowledgementIDs(p, e.suite.Secret)
	if f := assert.BackgroundDelivery.Main.Run(e.completing()); f != nil {
		e.fail(f, at.Seq, at.T, thread)
		return
	}
	if e.scenario == assert.ScenarioNested {
		e.nestedChild = assert.NestedChildThread(p)
		e.phase = PhaseNestedRead
		return
	}
	e.closing(at)
}

// completing is what the final and closing checks observe: the completing
// observation and the facts established by then.
func (e *Engine) completing() assert.Completing {
	return assert.Completing{Suite: e.suite, Projection: e.final,
		Facts: assert.Facts{Released: e.released, ParentGateRequested: e.ms.ParentGateRequested}}
}

// nestedRead runs the nested checks on the child's read (n.Child, or how the
// read failed) and, if they pass, the closing checks.
func (e *Engine) nestedRead(n assert.NestedRead, at *bundle.Event) {
	if f := assert.BackgroundDelivery.Nested.Run(n); f != nil {
		e.fail(f, at.Seq, at.T, e.nestedChild)
		return
	}
	e.closing(at)
}

// closing runs the checks after the nested read, on the completing
// observation, and moves on to the restart.
func (e *Engine) closing(at *bundle.Event) {
	if f := assert.BackgroundDelivery.Closing.Run(e.completing()); f != nil {
		e.fail(f, at.Seq, at.T, e.parentThread)
		return
	}
	e.phase, e.restartStage, e.reachedRestart = PhaseRestart, restartWaitMark, true
}

// restartRead runs the durability checks on the read of the thread after the
// restart (or on why it could not be made): the last stage of a passing run.
func (e *Engine) restartRead(r assert.RestartRead, at *bundle.Event) {
	if f := assert.BackgroundDelivery.Restart.Run(assert.Restarted{Suite: e.suite, Read: r, RunCount: e.runCount, AcknowledgementIDs: e.ackIDs}); f != nil {
		e.fail(f, at.Seq, at.T, e.parentThread)
		return
	}
	e.phase = PhasePassed
}
