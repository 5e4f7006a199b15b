package delivery

import (
	"encoding/json"
	"fmt"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

// interesting reports whether projections of thread are read by any check:
// only those are decoded.
func (r *run) interesting(thread string) bool {
	return thread != "" && (thread == r.parentThread || thread == r.watchedChild || thread == r.nestedChild)
}

// RPC implements replay.ScenarioRun: the correlated RPC timeline.
func (r *run) RPC(st *effectrpc.Step) {
	call := st.Call
	if call.Method == t3.MethodLaunchThread && r.parentThread == "" && r.verificationRun() && call.ThreadID != "" && st.Message != nil && st.Message.Tag == effectrpc.TagRequest {
		r.parentThread = call.ThreadID // no run mark: the launched thread is the parent
	}
	at := &bundle.Event{Seq: st.Seq, T: st.T}
	if m := st.Message; m != nil {
		switch {
		case m.Tag == effectrpc.TagChunk && call.Method == t3.MethodSubscribe && r.interesting(call.ThreadID):
			r.streamItems(call, m.Values, at)
		case m.Tag == effectrpc.TagExit && m.Exit.Tag == effectrpc.ExitSuccess:
			r.exitValue(call, m, at)
		}
	}
	if st.Ended && call.Outcome != effectrpc.OutcomeSuccess || st.Ended && call.Method == t3.MethodSubscribe {
		r.callEnded(call, at)
	}
}

// streamItems observes the snapshot items of a subscribeThread chunk.
func (r *run) streamItems(call *effectrpc.Call, values json.RawMessage, at *bundle.Event) {
	if ps, ok := r.lean.snapshots(values); ok {
		for _, p := range ps {
			r.observe(SourceSnapshot, call.ThreadID, p, at)
		}
		return
	}
	var items []struct {
		Kind       string         `json:"kind"`
		Projection *t3.Projection `json:"projection"`
	}
	if err := json.Unmarshal(values, &items); err != nil {
		r.env.KeepError(at.Seq, call.Conn, fmt.Errorf("subscribeThread chunk: %w", err), values)
		return
	}
	for _, it := range items {
		if it.Kind == t3.ItemKindSnapshot && it.Projection != nil {
			r.observe(SourceSnapshot, call.ThreadID, it.Projection, at)
		}
	}
}

// exitValue observes the projection in a successful launchThread or
// getThreadProjection answer m.
func (r *run) exitValue(call *effectrpc.Call, m *effectrpc.Message, at *bundle.Event) {
	value := m.Exit.Value
	switch call.Method {
	case t3.MethodLaunchThread:
		if !r.interesting(call.ThreadID) {
			return
		}
		if p, ok := r.lean.launchAnswer(value); ok {
			if p != nil {
				r.observe(SourceLaunch, call.ThreadID, p, at)
			}
			return
		}
		var v struct {
			ThreadID   string         `json:"threadId"`
			Projection *t3.Projection `json:"projection"`
		}
		if err := json.Unmarshal(value, &v); err != nil {
			r.env.KeepError(at.Seq, call.Conn, fmt.Errorf("launchThread answer: %w", err), value)
			return
		}
		if v.Projection != nil {
			r.observe(SourceLaunch, call.ThreadID, v.Projection, at)
		}
	case t3.MethodGetProjection:
		if !r.interesting(call.ThreadID) {
			return
		}
		if p, ok := r.lean.getProjection(value); ok {
			r.observe(SourceGetProjection, call.ThreadID, p, at)
			return
		}
		var p t3.Projection
		if err := json.Unmarshal(value, &p); err != nil {
			r.env.KeepError(at.Seq, call.Conn, fmt.Errorf("getThreadProjection answer: %w", err), value)
			return
		}
		r.observe(SourceGetProjection, call.ThreadID, &p, at)
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
func (r *run) callEnded(call *effectrpc.Call, at *bundle.Event) {
	if (call.Outcome == effectrpc.OutcomeUnknown || call.Outcome == effectrpc.OutcomeInterrupted || call.Interrupted) && r.pendingCut == nil {
		r.judgeCall(call, at)
		if r.phase == replay.PhaseFailed {
			r.pendingCut, r.phase, r.failure = r.failure, r.pendingPhase, nil
		}
		return
	}
	r.judgeCall(call, at)
}

func (r *run) judgeCall(call *effectrpc.Call, at *bundle.Event) {
	r.pendingPhase = r.phase
	how := describeEnd(call)
	switch {
	case call.Method == t3.MethodLaunchThread && call.ThreadID == r.parentThread && r.phase == replay.PhaseRunning:
		r.runEnd(assert.RunEnd{Launch: how}, at.Seq, at.T)
	case call.Method == t3.MethodSubscribe && call.ThreadID == r.parentThread && r.phase == replay.PhaseRunning:
		r.runEnd(assert.RunEnd{Undelivered: "the parent's subscription " + how + " before delivery was proven; last seen: " + assert.Summary(r.lastParent)}, at.Seq, at.T)
	case call.Method == t3.MethodGetProjection && call.ThreadID == r.parentThread && r.phase == replay.PhaseRunning:
		r.runEnd(assert.RunEnd{Undelivered: "getThreadProjection of the parent " + how + "; last seen: " + assert.Summary(r.lastParent)}, at.Seq, at.T)
	case call.Method == t3.MethodGetProjection && call.ThreadID == r.nestedChild && r.phase == PhaseNestedRead:
		r.nestedRead(assert.NestedRead{Suite: r.suite, Failed: "getThreadProjection of the child " + how}, at)
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
func (r *run) observe(src ObservationSource, thread string, p *t3.Projection, at *bundle.Event) {
	if r.Decided() {
		return
	}
	if r.hook != nil {
		r.notifyObservation(src, thread, p, at)
	}
	if thread != r.parentThread {
		if thread == r.watchedChild || thread == r.nestedChild {
			r.ms.NestedChildFinished = assert.NestedChildFinished(p)
		}
		if thread == r.nestedChild && r.phase == PhaseNestedRead {
			r.nestedRead(assert.NestedRead{Suite: r.suite, Child: p}, at)
		}
		return
	}
	if r.phase != replay.PhaseRunning {
		return
	}
	r.lastParent = p
	if f := r.checks.Observation.Run(assert.Observed{Suite: r.suite, Projection: p, Released: r.released}); f != nil {
		r.fail(f, at.Seq, at.T, thread)
		return
	}
	if r.scenario != assert.ScenarioActive {
		r.ms.ParentFinished = assert.ParentFinished(p)
	}
	if assert.Delivered(p) {
		r.ms.Delivered = true
	}
	if r.scenario == assert.ScenarioNested && r.watchedChild == "" {
		r.watchedChild = assert.NestedChildThread(p)
	}
	if !r.suite.Completed(p) {
		return
	}
	r.final = p
	r.runCount, r.ackIDs = len(p.Runs), assert.AcknowledgementIDs(p, r.suite.Secret)
	if f := r.checks.Main.Run(r.completing()); f != nil {
		r.fail(f, at.Seq, at.T, thread)
		return
	}
	if r.scenario == assert.ScenarioNested {
		r.nestedChild = assert.NestedChildThread(p)
		r.phase = PhaseNestedRead
		return
	}
	r.closing(at)
}

// completing is what the final and closing checks observe: the completing
// observation and the facts established by then.
func (r *run) completing() assert.Completing {
	return assert.Completing{Suite: r.suite, Projection: r.final,
		Facts: assert.Facts{Released: r.released, ParentGateRequested: r.ms.ParentGateRequested}}
}

// nestedRead runs the nested checks on the child's read (n.Child, or how the
// read failed) and, if they pass, the closing checks.
func (r *run) nestedRead(n assert.NestedRead, at *bundle.Event) {
	if f := r.checks.Nested.Run(n); f != nil {
		r.fail(f, at.Seq, at.T, r.nestedChild)
		return
	}
	r.closing(at)
}

// closing runs the checks after the nested read, on the completing
// observation, and moves on to the restart.
func (r *run) closing(at *bundle.Event) {
	if f := r.checks.Closing.Run(r.completing()); f != nil {
		r.fail(f, at.Seq, at.T, r.parentThread)
		return
	}
	r.phase, r.restartStage, r.reachedRestart = PhaseRestart, restartWaitMark, true
}

// restartRead runs the durability checks on the read of the thread after the
// restart (or on why it could not be made): the last stage of a passing run.
func (r *run) restartRead(read assert.RestartRead, at *bundle.Event) {
	if f := r.checks.Restart.Run(assert.Restarted{Suite: r.suite, Read: read, RunCount: r.runCount, AcknowledgementIDs: r.ackIDs}); f != nil {
		r.fail(f, at.Seq, at.T, r.parentThread)
		return
	}
	r.phase = replay.PhasePassed
}

// notifyObservation hands the observation to the hook (Observed). It is called only for observations the scenario itself makes
// (interesting threads, before the verdict is decided), so the hook sees
// what the checks saw and costs one check when unset.
func (r *run) notifyObservation(src ObservationSource, thread string, p *t3.Projection, at *bundle.Event) {
	if src == SourceGetProjection && thread == r.nestedChild && r.phase == PhaseNestedRead {
		src = SourceNestedRead
	}
	r.hook(Observation{Seq: at.Seq, T: at.T, ThreadID: thread, Parent: thread == r.parentThread, Source: src, Projection: p})
}
