// Package delivery is T3 Code's background-delivery scenario, the reference
// verifier's: a replay.Scenario that follows a verification run's parent
// thread (and the nested child) through the projections its Effect RPC
// calls and HTTP thread reads carry, the driver's marks, the gate and the
// server process, and runs the lists of assert.BackgroundDeliverySuite at
// their stages. The engine knows nothing of it: verify, replay, triage,
// view and the golden corpora pass Scenario in
// replay.EngineOptions.Scenarios.
package delivery

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

// Scenario is background delivery with the reference verifier's checks,
// assert.BackgroundDelivery, not applying where NotApplicable says.
var Scenario = New(assert.BackgroundDelivery)

// NotApplicable are the runs background delivery cannot apply to: a
// scenario and a provider driver, and why. A run of one (its manifest's
// scenario and assert.ManifestProvider) is decided at its header as
// assert.StatusNotApplicable, with the reason. None today: every scenario
// applies to both drivers. Native applies to Codex too although the Codex
// CLI starts no turn when its background command ends: the server
// delivers that command's completion, which is what native judges
// (docs/providers.md).
var NotApplicable []assert.NotApplicable

// Spec is a background-delivery scenario as a value: the checks it runs,
// one list per stage, and the runs it does not apply to.
type Spec struct {
	Checks assert.BackgroundDeliverySuite
	// NotApplicable are the scenario/provider pairs the checks cannot
	// apply to (nil: every run applies).
	NotApplicable []assert.NotApplicable
}

// Scenario is the spec as the engine's scenario.
func (s Spec) Scenario() replay.Scenario { return scenario(s, nil) }

// Scenarios is the list to pass in replay.EngineOptions.Scenarios: the
// scenarios whose verdicts wireproof records and reproduces.
func Scenarios() []replay.Scenario { return []replay.Scenario{Scenario} }

// Options returns opts (nil: the defaults) with Scenarios() as the engine's
// scenarios when it names none: the options of a replay whose verdict is
// the one verify records.
func Options(opts *replay.Options) *replay.Options { return Registered().Options(opts) }

// EngineOptions is Options for an engine of its own (replay.NewEngine,
// replay.NewLive).
func EngineOptions(opts *replay.EngineOptions) *replay.EngineOptions {
	return Options(&replay.Options{Engine: opts}).Engine
}

// New is background delivery with the given checks, one list per stage,
// run as they are, not applying where NotApplicable says.
func New(checks assert.BackgroundDeliverySuite) replay.Scenario {
	return Spec{Checks: checks, NotApplicable: NotApplicable}.Scenario()
}

// Registered is the spec of Scenario: the reference verifier's checks, not
// applying where NotApplicable says.
func Registered() Spec {
	return Spec{Checks: assert.BackgroundDelivery, NotApplicable: NotApplicable}
}

// SpecOr is *s, or Registered() when s is nil: what an options struct's
// spec field (nil: the registered scenario) means.
func SpecOr(s *Spec) Spec {
	if s == nil {
		return Registered()
	}
	return *s
}

// Observed is Scenario, handing every projection it observes to hook, in
// seq order, before the checks run on it (see Observation): the triage
// tools' story of a run, from the same pass and decode as the verdict.
func Observed(hook func(Observation)) replay.Scenario {
	return Registered().Observed(hook)
}

// Observed is the spec's scenario, handing every projection it observes to
// hook (see the package's Observed).
func (s Spec) Observed(hook func(Observation)) replay.Scenario { return scenario(s, hook) }

// Options returns opts (nil: the defaults) with the spec's scenario as the
// engine's scenarios when it names none.
func (s Spec) Options(opts *replay.Options) *replay.Options {
	o := replay.Options{}
	if opts != nil {
		o = *opts
	}
	eo := replay.EngineOptions{}
	if o.Engine != nil {
		eo = *o.Engine
	}
	if eo.Scenarios == nil {
		eo.Scenarios = []replay.Scenario{s.Scenario()}
	}
	o.Engine = &eo
	return &o
}

func scenario(spec Spec, hook func(Observation)) replay.Scenario {
	return replay.Scenario{ID: assert.SuiteBackgroundDelivery, New: func(env *replay.ScenarioEnv) replay.ScenarioRun {
		return &run{env: env, checks: spec.Checks, notApplicable: spec.NotApplicable, hook: hook, phase: replay.PhaseRunning, http: map[string]*exchange{}, lean: newLeanDecoder()}
	}}
}

// The scenario's phases between running and the verdict, in Status.Phase:
// what the live driver must do next.
const (
	// PhaseNestedRead: the nested main checks passed; the driver must read
	// the child thread (Status.ChildThreadID) with getThreadProjection. The
	// first child observation after this is the nested read.
	PhaseNestedRead replay.Phase = "nested-read"
	// PhaseRestart: the main checks passed; the driver must restart the
	// server and read the thread over HTTP.
	PhaseRestart replay.Phase = "restart"
)

// Restart stages after the main checks passed.
const (
	restartWaitMark  = iota // waiting for MarkRestart
	restartWaitReady        // MarkRestart seen, waiting for the server's proc.ready
	restartWaitRead         // waiting for the HTTP read of the parent thread
)

// run is the scenario on one bundle. Memory is bounded by the latest
// projections of the parent and child threads, not by the stream.
type run struct {
	env    *replay.ScenarioEnv
	checks assert.BackgroundDeliverySuite
	hook   func(Observation) // Observed's; nil costs one check per observation

	notApplicable []assert.NotApplicable // Spec's
	inapplicable  *assert.NotApplicable  // the entry the manifest matched: decided not-applicable
	provider      assert.Provider        // the manifest's

	scenario       assert.Scenario // from MarkRun, else the header's manifest
	info           *replay.RunInfo
	suite          assert.Suite
	parentThread   string
	gatePath       string
	parentGatePath string

	lean     *leanDecoder
	http     map[string]*exchange
	released bool

	serverSignalled bool

	phase          replay.Phase
	ms             assert.Milestones
	watchedChild   string          // the nested child whose progress drives nestedChildFinished
	nestedChild    string          // the child the nested read is for
	lastParent     *t3.Projection  // latest parent observation
	final          *t3.Projection  // the completing observation
	restartStage   int             // restartWait*
	reachedRestart bool            // the main checks passed
	failure        *assert.Failure // set when decided failed
	serverReady    bool            // the server process running now printed its ready line
	pendingCut     *assert.Failure // a call cut off by a dropped socket, judged later (see callEnded)
	pendingPhase   replay.Phase    // the phase before pendingCut was judged
	runCount       int
	ackIDs         []string
}

// verificationRun reports whether the bundle records a verification run (a
// run mark, or a scenario in its manifest): only then is there a verdict.
func (r *run) verificationRun() bool { return r.info != nil || r.scenario != "" }

// Decided implements replay.ScenarioRun.
func (r *run) Decided() bool {
	switch r.phase {
	case replay.PhasePassed, replay.PhaseFailed, replay.PhaseSkipped, replay.PhaseNotApplicable:
		return true
	}
	return false
}

// KnownValue implements replay.KnownValues: the projections decoded last.
func (r *run) KnownValue(rest []byte) int { return r.lean.memo.prefix(rest) }

// Manifest implements replay.ScenarioRun. A run the spec does not apply to
// (its manifest's scenario and provider) is decided here, at the header:
// nothing after it is judged, and the live driver drives nothing.
func (r *run) Manifest(m bundle.Manifest) {
	if r.scenario == "" {
		r.scenario = assert.Scenario(m.Scenario)
	}
	r.provider = assert.ManifestProvider(m)
	if na := assert.Inapplicable(r.notApplicable, assert.Scenario(m.Scenario), r.provider); na != nil {
		r.inapplicable, r.phase = na, replay.PhaseNotApplicable
	}
}

// Event implements replay.ScenarioRun.
func (r *run) Event(ev *bundle.Event) {
	switch ev.Kind {
	case bundle.KindMark:
		r.mark(ev)
	case bundle.KindGateRequest, bundle.KindGateRelease:
		r.gate(ev)
	case bundle.KindProcStart, bundle.KindProcReady, bundle.KindProcSignal, bundle.KindProcExit:
		r.proc(ev)
	}
}

// Status implements replay.ScenarioRun.
func (r *run) Status() replay.Status {
	s := replay.Status{Phase: r.phase, Milestones: r.ms, Failure: r.failure}
	if r.phase == PhaseNestedRead {
		s.ChildThreadID = r.nestedChild
	}
	return s
}

// Verdict implements replay.ScenarioRun: the background-delivery suite's.
func (r *run) Verdict() (assert.Verdict, bool) {
	if !r.verificationRun() {
		return assert.Verdict{}, false
	}
	if r.phase == replay.PhaseNotApplicable {
		return assert.Verdict{Status: assert.StatusNotApplicable, Scenario: r.scenario, Provider: r.provider, Reason: r.inapplicable.Reason}, true
	}
	v := assert.Verdict{Status: assert.StatusPassed, Scenario: r.scenario, ThreadID: r.parentThread}
	if r.final != nil {
		v.RunCount, v.AcknowledgementIDs = r.runCount, r.ackIDs
	}
	if r.phase == replay.PhasePassed {
		v.Restart = assert.StatusPassed
		return v, true
	}
	if r.phase == replay.PhaseSkipped {
		v.Status = assert.StatusSkipped
		return v, true
	}
	v.Status = assert.StatusFailed
	f := *r.failure
	v.Failure = &f
	ms := r.ms
	v.Milestones = &ms
	v.Restart = assert.StatusSkipped
	if r.reachedRestart {
		v.Restart = assert.StatusFailed
	}
	return v, true
}

// End implements replay.ScenarioRun: a call cut off decides, else the
// bundle ended before the run did (stream-delivered).
func (r *run) End(at *bundle.Event) {
	if r.decidePendingCut() {
		return
	}
	if !r.verificationRun() {
		// Not a verification run (a plain recording): nothing to check.
		r.phase = replay.PhaseSkipped
		return
	}
	var seen string
	switch {
	case r.info == nil:
		seen = "the bundle ended before the run began (no run mark)"
	case r.phase == PhaseNestedRead:
		seen = fmt.Sprintf("the bundle ended before the nested read of child thread %s", r.nestedChild)
	case r.phase == PhaseRestart:
		seen = "the bundle ended before the restart read: " + [...]string{"no restart mark", "the restarted server never became ready", "no HTTP read of the thread after the restart"}[r.restartStage]
	default:
		seen = "the bundle ended before delivery was proven; last seen: " + assert.Summary(r.lastParent)
	}
	r.runEnd(assert.RunEnd{Undelivered: seen}, at.Seq, at.T)
}

// decidePendingCut fails the run with the kept cut-off call, if there is one.
func (r *run) decidePendingCut() bool {
	if r.pendingCut == nil || r.Decided() {
		return false
	}
	r.failure, r.phase = r.pendingCut, replay.PhaseFailed
	return true
}

// fail decides the verdict as failed with f located at seq/t.
func (r *run) fail(f *assert.Failure, seq uint64, t int64, thread string) {
	if r.Decided() {
		return
	}
	f.Seq, f.T = seq, t
	if f.ThreadID == "" {
		f.ThreadID = thread
	}
	if f.RunID == "" && thread == r.parentThread && r.lastParent != nil && len(r.lastParent.Runs) > 0 {
		f.RunID = r.lastParent.Runs[len(r.lastParent.Runs)-1].ID
	}
	r.failure = f
	r.phase = replay.PhaseFailed
}

// runEnd decides the verdict with the run-level check that fails on e, at
// seq/t: the deciding event of the driver or the server.
func (r *run) runEnd(e assert.RunEnd, seq uint64, t int64) {
	if f := r.checks.Run.Run(e); f != nil {
		r.fail(f, seq, t, r.parentThread)
	}
}

// mark handles the driver's marks.
func (r *run) mark(ev *bundle.Event) {
	switch ev.Name {
	case replay.MarkRun:
		var info replay.RunInfo
		if !r.env.DecodeMark(ev, &info) {
			return
		}
		r.info = &info
		if info.Scenario != "" {
			r.scenario = info.Scenario
		}
		r.suite = assert.Suite{Scenario: r.scenario, Secret: info.Secret}
		r.parentThread = info.ThreadID
		if u, err := url.Parse(info.GateURL); err == nil && info.GateURL != "" {
			r.gatePath = u.Path
			r.parentGatePath = u.Path + "/parent"
		}
		if r.scenario != assert.ScenarioNested {
			r.ms.NestedChildFinished = true // as the reference initialises it
		}
	case replay.MarkRestart:
		var b replay.RestartMark
		if len(ev.Body.Data) > 0 { // nothing of it is read; synthetic bundles have none
			r.env.DecodeMark(ev, &b)
		}
		if r.phase == PhaseRestart && r.restartStage == restartWaitMark {
			r.restartStage = restartWaitReady
		}
	case replay.MarkDeadline:
		var b replay.DeadlineMark
		r.env.DecodeMark(ev, &b)
		r.runEnd(assert.RunEnd{Deadline: &assert.Cut{TimeoutSeconds: b.TimeoutSeconds, When: r.when(b.While)}}, ev.Seq, ev.T)
	case replay.MarkInterrupted:
		var b replay.InterruptedMark
		if len(ev.Body.Data) > 0 { // older drivers wrote no body: nothing to complain about
			r.env.DecodeMark(ev, &b)
		}
		r.runEnd(assert.RunEnd{Interrupted: &assert.Cut{When: r.when(b.While)}}, ev.Seq, ev.T)
	case replay.MarkDriverError:
		if r.decidePendingCut() {
			return
		}
		var b replay.StepMark
		r.env.DecodeMark(ev, &b)
		if r.phase == PhaseRestart {
			// The main checks passed; what failed is reading the thread
			// back from the restarted server.
			r.restartRead(assert.RestartRead{NotMade: &assert.StepError{Step: string(b.Step), Error: b.Error}}, ev)
			return
		}
		r.runEnd(assert.RunEnd{Undelivered: fmt.Sprintf("the driver could not go on (%s): %s; last seen: %s", b.Step, b.Error, assert.Summary(r.lastParent))}, ev.Seq, ev.T)
	case replay.MarkSetupFailed:
		var b replay.StepMark
		r.env.DecodeMark(ev, &b)
		r.runEnd(assert.RunEnd{Setup: &assert.StepError{Step: string(b.Step), Error: b.Error}}, ev.Seq, ev.T)
	}
}

// when says when the run was cut: what the driver says it was doing (the
// mark's "while"), or, in bundles from drivers that did not say, the
// scenario's own phase.
func (r *run) when(while string) string {
	if while != "" {
		return "while " + while
	}
	return "in phase " + string(r.phase)
}

// gate handles gate requests and releases.
func (r *run) gate(ev *bundle.Event) {
	path := ev.URL
	if u, err := url.Parse(ev.URL); err == nil {
		path = u.Path
	}
	if r.gatePath == "" {
		return
	}
	switch {
	case ev.Kind == bundle.KindGateRequest && path == r.gatePath:
		r.ms.GateRequested = true
	case ev.Kind == bundle.KindGateRequest && path == r.parentGatePath:
		r.ms.ParentGateRequested = true
		r.ms.ParentFinished = true // the reference marks the parent finished when it enters the gate
	case ev.Kind == bundle.KindGateRelease && path == r.gatePath:
		r.released = true
		r.ms.GateReleased = true
	}
}

// proc handles the server's lifecycle: an exit nobody asked for fails the
// run (the engine then ends the calls still open).
func (r *run) proc(ev *bundle.Event) {
	if ev.Conn != replay.ServerConn {
		return
	}
	switch ev.Kind {
	case bundle.KindProcStart:
		r.serverSignalled, r.serverReady = false, false
	case bundle.KindProcSignal:
		// The SIGKILL to what is left of the process group (its provider
		// processes) after the server died is cleanup, not a request to stop.
		if !groupSignal(ev) {
			r.serverSignalled = true
		}
	case bundle.KindProcReady:
		r.serverReady = true
		if r.phase == PhaseRestart && r.restartStage == restartWaitReady {
			r.restartStage = restartWaitRead
		}
	case bundle.KindProcExit:
		if !r.serverSignalled {
			how := fmt.Sprintf("exit code %d", ev.Code)
			if ev.Name != "" {
				how = "signal " + ev.Name
			}
			if ev.Err != "" {
				how += " (" + ev.Err + ")"
			}
			when := "in phase " + string(r.phase)
			if !r.serverReady {
				when = "before it became ready"
			}
			r.runEnd(assert.RunEnd{ServerExit: &assert.ServerExit{How: how, Seq: ev.Seq, T: ev.T, When: when}}, ev.Seq, ev.T)
		}
	}
}

// groupSignal reports a signal sent to the rest of a process's group
// (record.Process marks it {"group":true}).
func groupSignal(ev *bundle.Event) bool {
	var a struct {
		Group bool `json:"group"`
	}
	return len(ev.Attrs) > 0 && json.Unmarshal(ev.Attrs, &a) == nil && a.Group
}
