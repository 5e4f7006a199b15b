package replay

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/t3"
)

// Engine phases reported in Status.Phase, after the driver's (marks.go):
// PhaseRunning is both. PhasePassed, PhaseFailed and PhaseSkipped are the
// verdict's statuses.
const (
	// PhaseNestedRead: the nested main checks passed; the driver must read the
	// child thread (Status.ChildThreadID) with getThreadProjection. The first
	// child observation after this is the nested read.
	PhaseNestedRead Phase = "nested-read"
	// PhaseRestart: the main checks passed; the driver must restart the server
	// and read the thread over HTTP.
	PhaseRestart Phase = "restart"
	PhasePassed        = Phase(assert.StatusPassed)
	PhaseFailed        = Phase(assert.StatusFailed)
	// PhaseSkipped: the stream ended and held no verification run to check.
	PhaseSkipped = Phase(assert.StatusSkipped)
)

// Status is the engine's progress, which the live driver acts on.
type Status struct {
	Phase         Phase
	ChildThreadID string // set in PhaseNestedRead
	Failure       *assert.Failure
	Milestones    assert.Milestones
}

// equal reports whether two statuses say the same (their failures compared
// by value).
func (s Status) equal(o Status) bool {
	if s.Phase != o.Phase || s.ChildThreadID != o.ChildThreadID || s.Milestones != o.Milestones || (s.Failure == nil) != (o.Failure == nil) {
		return false
	}
	return s.Failure == nil || *s.Failure == *o.Failure
}

// EngineOptions tune the engine. A nil *EngineOptions means the defaults.
type EngineOptions struct {
	// MaxBody caps a buffered HTTP response body (thread reads); 0 means 64 MiB.
	MaxBody int
	// MaxDecodeErrors caps the decode errors kept (all are counted); 0 means 100.
	MaxDecodeErrors int
	// OnObservation, if set, is called for every projection observation the
	// engine makes, in seq order, before the checks run on it (see
	// Observation). nil costs nothing on the hot path.
	OnObservation func(Observation)
	// OnEvent, if set, is called for every protocol event the decoders
	// produce (calls, chunks, answers, notifications, closes), in seq order,
	// until the run's end mark, before the event suites judge it. The event
	// is valid only during the call.
	OnEvent func(*protocol.Event)
	// OnBundleEvent, if set, is called for every event fed (the header
	// included), before the engine handles it: the per-event hook of the one
	// pass. Its payload may be empty where no check reads it (see
	// ReplayFile).
	OnBundleEvent func(*bundle.Event)
	// Suites are event suites run after ConformanceSuite, in order, on the
	// bundles they apply to.
	Suites []EventSuite
	// Routes are tried before the engine's own (see Routes), so a decoder
	// can take the connections that carry its protocol. An HTTP exchange
	// one takes is not the engine's HTTP decoder's, whose responses are the
	// thread reads the background-delivery suite observes.
	Routes []protocol.Route
	// Tap, if set, receives the decoded calls of the whole bundle (see
	// Tap). The verdict is the same with or without one.
	Tap *Tap
}

// DecodeError is a frame or body that could not be decoded. It is kept and
// shown, never dropped silently.
type DecodeError struct {
	Seq  uint64 `json:"seq"`
	Conn string `json:"conn,omitempty"`
	Err  string `json:"err"`
	Raw  string `json:"raw,omitempty"` // the first bytes of what could not be decoded
}

// SeqGapError is a broken stream: events must arrive gapless and in seq order.
type SeqGapError struct{ Want, Got uint64 }

func (e *SeqGapError) Error() string {
	return fmt.Sprintf("event stream broken: expected seq %d, got %d", e.Want, e.Got)
}

// Restart stages after the main checks passed.
const (
	restartWaitMark  = iota // waiting for MarkRestart
	restartWaitReady        // MarkRestart seen, waiting for the server's proc.ready
	restartWaitRead         // waiting for the HTTP read of the parent thread
)

// Engine computes a verdict from the ordered event stream of one run. It is
// what the live driver runs on every recorded event and what replay runs on
// the file, so both reach the same verdict. Once decided, the verdict is
// sticky: later events (shutdown, the verdict event, the trailer) are
// ignored. Memory is bounded by the latest projections of the parent and
// child threads and the open calls, not by the stream. Not safe for
// concurrent use; see Live.
type Engine struct {
	maxBody, maxErrs int

	started bool
	next    uint64
	events  uint64
	lastSeq uint64 // last event that mattered to the checks
	lastT   int64

	scenario       assert.Scenario // from MarkRun, else the header's manifest
	info           *RunInfo
	suite          assert.Suite
	parentThread   string
	gatePath       string
	parentGatePath string

	corr     *effectrpc.Correlator
	lean     *leanDecoder // the projections; its memo is the correlator's KnownValue
	http     map[string]*exchange
	released bool

	serverConn      string
	serverSignalled bool

	phase          Phase
	ms             assert.Milestones
	watchedChild   string          // the nested child whose progress drives nestedChildFinished
	nestedChild    string          // the child the nested read is for
	lastParent     *t3.Projection  // latest parent observation
	final          *t3.Projection  // the completing observation
	finalAt        *bundle.Event   // where it was seen
	restartStage   int             // restartWait*
	reachedRestart bool            // the main checks passed
	failure        *assert.Failure // set when decided failed
	serverReady    bool            // the server process running now printed its ready line
	pendingCut     *assert.Failure // a call cut off by a dropped socket, judged later (see callEnded)
	pendingPhase   Phase           // the phase before pendingCut was judged
	runCount       int
	ackIDs         []string

	decodeErrors []DecodeError
	decodeCount  int

	onObservation func(Observation)   // EngineOptions.OnObservation
	onBundleEvent func(*bundle.Event) // EngineOptions.OnBundleEvent
	tap           *tapState           // EngineOptions.Tap; nil costs nothing

	// The protocol layer: every connection goes to the decoder of what it
	// carries, and the conformance suite judges the protocol events until
	// the run's end mark.
	router  *protocol.Router
	jsonrpc *protocol.JSONRPCDecoder
	httpDec *protocol.HTTPDecoder
	conf    conformance
}

// NewEngine returns an engine waiting for the first event.
func NewEngine(opts *EngineOptions) *Engine {
	e := &Engine{maxBody: 64 << 20, maxErrs: 100, phase: PhaseRunning, serverConn: "server", http: map[string]*exchange{}}
	suites := []EventSuite{ConformanceSuite}
	var routes []protocol.Route
	var onEvent func(*protocol.Event)
	if opts != nil {
		suites = append(suites, opts.Suites...)
		routes, onEvent, e.onBundleEvent = opts.Routes, opts.OnEvent, opts.OnBundleEvent
		if opts.MaxBody > 0 {
			e.maxBody = opts.MaxBody
		}
		if opts.MaxDecodeErrors > 0 {
			e.maxErrs = opts.MaxDecodeErrors
		}
		e.onObservation = opts.OnObservation
		if opts.Tap != nil {
			e.tap = &tapState{Tap: *opts.Tap}
		}
	}
	e.lean = newLeanDecoder()
	emit := e.onRPC
	if e.tap != nil {
		emit = e.rpcStep
	}
	e.corr = effectrpc.NewCorrelator(emit, &effectrpc.Options{Path: t3.PathWebSocket, KnownValue: e.lean.memo.prefix})
	e.jsonrpc = protocol.NewJSONRPCDecoder()
	e.httpDec = protocol.NewHTTPDecoder(&protocol.HTTPOptions{Keep: e.keepThreadRead, MaxBody: e.maxBody})
	// After the caller's routes: stdio lines of the Claude CLI's stream-json
	// (the provider-N channels verify records), then the engine's own.
	all := append(append([]protocol.Route{}, routes...), protocol.StreamJSONRoute(protocol.NewStreamJSONDecoder()))
	e.router = protocol.NewRouter(append(all, Routes(e.corr, e.jsonrpc, e.httpDec)...), e.protocolEvent)
	e.conf.init(suites, onEvent)
	return e
}

// Routes are the routes of the engine's router, in order: stdio lines of
// JSON-RPC 2.0; a WebSocket on T3's path (a hint: Effect RPC, whatever its
// framing); a WebSocket whose first message is plain JSON-RPC 2.0; any other
// WebSocket to the Correlator (Effect RPC, json or ndjson, which decides
// from the frames whether it carries RPC at all); every HTTP exchange.
func Routes(corr *effectrpc.Correlator, jsonrpc *protocol.JSONRPCDecoder, httpDec *protocol.HTTPDecoder) []protocol.Route {
	rpc := protocol.JSONRPCRoutes(jsonrpc)
	effect := effectDecoder{corr}
	return []protocol.Route{
		rpc[0],
		{Protocol: protocol.EffectRPC, Decoder: effect, Match: func(open, first *bundle.Event) bool {
			if open == nil || open.Kind != bundle.KindWSOpen {
				return false
			}
			u, err := url.Parse(open.URL)
			return err == nil && u.Path == t3.PathWebSocket
		}},
		rpc[1],
		{Protocol: protocol.EffectRPC, Decoder: effect, Match: func(open, first *bundle.Event) bool {
			return (open != nil && open.Kind == bundle.KindWSOpen) || (first != nil && first.Kind == bundle.KindWSMessage)
		}},
		protocol.HTTPRoute(httpDec),
	}
}

// protocolEvent receives the router's protocol events.
func (e *Engine) protocolEvent(pe *protocol.Event) {
	if e.tap != nil {
		defer e.tapProtocol(pe)
	}
	if e.conf.done {
		return
	}
	if pe.Kind == protocol.KindDecodeError {
		e.keepError(pe.Seq, pe.Conn, pe.Err, pe.Raw)
		return
	}
	e.conf.observe(pe)
	if pe.Protocol == protocol.HTTP && (pe.Kind == protocol.KindResponse || pe.Kind == protocol.KindEnd) {
		e.threadResponse(pe) // after the checks, as its http.end is fed
	}
}

// verificationRun reports whether the bundle records a verification run (a
// run mark, or a scenario in its manifest): only then does the
// background-delivery suite run.
func (e *Engine) verificationRun() bool { return e.info != nil || e.scenario != "" }

// wire feeds the protocol layer, until the checks' cut-off: the driver's
// done mark (where Feed decides the verdict), the verdict event or the end of
// the bundle.
func (e *Engine) wire(ev *bundle.Event) {
	switch ev.Kind {
	case bundle.KindWSOpen, bundle.KindWSMessage, bundle.KindWSClose, bundle.KindStdioLine,
		bundle.KindHTTPRequest, bundle.KindHTTPResponse, bundle.KindHTTPBody, bundle.KindHTTPEnd:
		e.router.Feed(ev)
	case bundle.KindProcExit:
		e.router.Feed(ev) // it ends the process's stdio channel
		if ev.Conn == e.serverConn {
			e.router.Stop(ev, "the server stopped")
			if e.decided() {
				e.corr.ServerStopped(ev) // else the scenario's proc handler does, in its order
			}
		}
	case bundle.KindMark:
		if ev.Name == MarkPhase {
			var b PhaseMark
			if e.decodeMark(ev, &b) && b.Phase == PhaseDone {
				e.conf.done = true
			}
		}
	case bundle.KindVerdict:
		e.conf.done = true
	}
}

func (e *Engine) decided() bool {
	return e.phase == PhasePassed || e.phase == PhaseFailed || e.phase == PhaseSkipped
}

// Feed takes the next event. Events must come in seq order without gaps (the
// first may have any seq); a gap is the only error. Undecodable payloads are
// kept as decode errors, not returned.
func (e *Engine) Feed(ev *bundle.Event) error {
	if e.started && ev.Seq != e.next {
		return &SeqGapError{Want: e.next, Got: ev.Seq}
	}
	e.started, e.next = true, ev.Seq+1
	e.events++
	if e.onBundleEvent != nil {
		e.onBundleEvent(ev)
	}
	if e.tap != nil {
		e.tap.last = bundle.Event{Seq: ev.Seq, T: ev.T}
	}
	if !e.conf.done {
		e.wire(ev)
	} else if e.tap != nil {
		defer e.tapFeed(ev) // after the checks, which decide whether it can go to the decoders now
	}
	if e.decided() {
		return nil
	}
	switch ev.Kind {
	case bundle.KindHeader:
		var h bundle.Header
		if json.Unmarshal(ev.Body.Data, &h) == nil {
			if e.scenario == "" {
				e.scenario = assert.Scenario(h.Manifest.Scenario)
			}
			e.conf.manifest(h.Manifest)
		}
		return nil
	case bundle.KindMark:
		e.mark(ev)
		if e.conf.done {
			// The driver's done mark (wire saw it): the cut-off of every
			// check. The verdict is decided here, live and in replay, so no
			// event after it (recorded while the live driver took the
			// verdict) can change it; a Tap still sees those events.
			e.lastSeq, e.lastT = ev.Seq, ev.T
			e.finalize()
			return nil
		}
	case bundle.KindWSOpen, bundle.KindWSMessage, bundle.KindWSClose:
		// Decoded by the protocol layer (wire), which hands Effect RPC
		// sockets to the Correlator.
	case bundle.KindHTTPRequest, bundle.KindHTTPResponse, bundle.KindHTTPBody, bundle.KindHTTPEnd:
		// Decoded by the protocol layer (wire), whose HTTP decoder keeps
		// the thread reads' bodies for the engine (threadResponse).
	case bundle.KindGateRequest, bundle.KindGateRelease:
		e.gate(ev)
	case bundle.KindProcStart, bundle.KindProcReady, bundle.KindProcSignal, bundle.KindProcExit:
		e.proc(ev)
	case bundle.KindVerdict:
		// No done mark came before it (an older or a synthetic bundle): an undecided
		// engine finalizes here, at the last event that mattered, as Verdict
		// did live.
		e.finalize()
		return nil
	default:
		return nil // logs, stdio, artifacts, trailer: no check reads them
	}
	e.lastSeq, e.lastT = ev.Seq, ev.T
	return nil
}

// FeedHeader feeds a bundle's header as its first event (seq 0). Replay feeds
// the header the Reader read; the live driver feeds the one it wrote, so the
// engine starts from the same facts (the manifest's scenario) on both paths.
func (e *Engine) FeedHeader(h bundle.Header) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return e.Feed(&bundle.Event{Seq: 0, Kind: bundle.KindHeader, Body: bundle.Text(b)})
}

// Events is the number of events fed.
func (e *Engine) Events() uint64 { return e.events }

// DecodeErrors returns the first decode errors kept and the total count.
func (e *Engine) DecodeErrors() ([]DecodeError, int) { return e.decodeErrors, e.decodeCount }

// Status reports the phase, milestones and failure so far.
func (e *Engine) Status() Status {
	s := Status{Phase: e.phase, Milestones: e.ms, Failure: e.failure}
	if e.phase == PhaseNestedRead {
		s.ChildThreadID = e.nestedChild
	}
	return s
}

// Verdict returns the verdict for everything fed so far. If none was decided,
// it decides now that the stream ended before the run finished
// (stream-delivered), located at the last event that mattered, and sticks.
func (e *Engine) Verdict() assert.Verdict {
	if e.tap != nil {
		e.tap.ending = true
		e.finalize()
		e.tapEnd()
	}
	e.finalize()
	suites := e.conf.results()
	if !e.verificationRun() {
		// A plain recording: only the event suites run.
		v := assert.Verdict{Status: assert.StatusPassed, Suites: suites}
		for _, s := range suites {
			if s.Failure != nil {
				f := *s.Failure
				v.Status, v.Failure = assert.StatusFailed, &f
				break
			}
		}
		return v
	}
	v := e.scenarioVerdict()
	bg := assert.SuiteResult{Suite: assert.SuiteBackgroundDelivery, Status: v.Status}
	if v.Failure != nil {
		f := *v.Failure
		bg.Failure = &f
	}
	v.Suites = append([]assert.SuiteResult{bg}, suites...)
	for _, s := range suites {
		if v.Status == assert.StatusPassed && s.Failure != nil {
			f := *s.Failure
			v.Status, v.Failure = assert.StatusFailed, &f
		}
	}
	return v
}

// scenarioVerdict is the verdict of the background-delivery suite.
func (e *Engine) scenarioVerdict() assert.Verdict {
	v := assert.Verdict{Status: assert.StatusPassed, Scenario: e.scenario, ThreadID: e.parentThread}
	if e.final != nil {
		v.RunCount, v.AcknowledgementIDs = e.runCount, e.ackIDs
	}
	if e.phase == PhasePassed {
		v.Restart = assert.StatusPassed
		return v
	}
	if e.phase == PhaseSkipped {
		v.Status = assert.StatusSkipped
		return v
	}
	v.Status = assert.StatusFailed
	f := *e.failure
	v.Failure = &f
	ms := e.ms
	v.Milestones = &ms
	v.Restart = assert.StatusSkipped
	if e.reachedRestart {
		v.Restart = assert.StatusFailed
	}
	return v
}

func (e *Engine) finalize() {
	if !e.conf.done {
		e.router.Stop(&bundle.Event{Seq: e.lastSeq, T: e.lastT}, "the bundle ended")
		e.conf.done = true
	}
	if e.decided() {
		return
	}
	e.corr.End(&bundle.Event{Seq: e.lastSeq, T: e.lastT})
	if e.decided() {
		return
	}
	if e.decidePendingCut() {
		return
	}
	if e.info == nil && e.scenario == "" {
		// Not a verification run (a plain recording): nothing to check.
		e.phase = PhaseSkipped
		return
	}
	var seen string
	switch {
	case e.info == nil:
		seen = "the bundle ended before the run began (no run mark)"
	case e.phase == PhaseNestedRead:
		seen = fmt.Sprintf("the bundle ended before the nested read of child thread %s", e.nestedChild)
	case e.phase == PhaseRestart:
		seen = "the bundle ended before the restart read: " + [...]string{"no restart mark", "the restarted server never became ready", "no HTTP read of the thread after the restart"}[e.restartStage]
	default:
		seen = "the bundle ended before delivery was proven; last seen: " + assert.Summary(e.lastParent)
	}
	e.runEnd(assert.RunEnd{Undelivered: seen}, e.lastSeq, e.lastT)
}

// decidePendingCut fails the run with the kept cut-off call, if there is one.
func (e *Engine) decidePendingCut() bool {
	if e.pendingCut == nil || e.decided() {
		return false
	}
	e.failure, e.phase = e.pendingCut, PhaseFailed
	return true
}

// fail decides the verdict as failed with f located at seq/t.
func (e *Engine) fail(f *assert.Failure, seq uint64, t int64, thread string) {
	if e.decided() {
		return
	}
	f.Seq, f.T = seq, t
	if f.ThreadID == "" {
		f.ThreadID = thread
	}
	if f.RunID == "" && thread == e.parentThread && e.lastParent != nil && len(e.lastParent.Runs) > 0 {
		f.RunID = e.lastParent.Runs[len(e.lastParent.Runs)-1].ID
	}
	e.failure = f
	e.phase = PhaseFailed
}

// runEnd decides the verdict with the run-level check that fails on r, at
// seq/t: the deciding event of the driver or the server.
func (e *Engine) runEnd(r assert.RunEnd, seq uint64, t int64) {
	if f := assert.BackgroundDelivery.Run.Run(r); f != nil {
		e.fail(f, seq, t, e.parentThread)
	}
}

// mark handles the driver's marks.
func (e *Engine) mark(ev *bundle.Event) {
	switch ev.Name {
	case MarkRun:
		var info RunInfo
		if !e.decodeMark(ev, &info) {
			return
		}
		e.info = &info
		if info.Scenario != "" {
			e.scenario = info.Scenario
		}
		e.suite = assert.Suite{Scenario: e.scenario, Secret: info.Secret}
		e.parentThread = info.ThreadID
		if u, err := url.Parse(info.GateURL); err == nil && info.GateURL != "" {
			e.gatePath = u.Path
			e.parentGatePath = u.Path + "/parent"
		}
		if e.scenario != assert.ScenarioNested {
			e.ms.NestedChildFinished = true // as the reference initialises it
		}
	case MarkRestart:
		var b RestartMark
		if len(ev.Body.Data) > 0 { // the engine reads nothing of it; synthetic bundles have none
			e.decodeMark(ev, &b)
		}
		if e.phase == PhaseRestart && e.restartStage == restartWaitMark {
			e.restartStage = restartWaitReady
		}
	case MarkDeadline:
		var b DeadlineMark
		e.decodeMark(ev, &b)
		e.runEnd(assert.RunEnd{Deadline: &assert.Cut{TimeoutSeconds: b.TimeoutSeconds, When: e.when(b.While)}}, ev.Seq, ev.T)
	case MarkInterrupted:
		var b InterruptedMark
		if len(ev.Body.Data) > 0 { // older drivers wrote no body: nothing to complain about
			e.decodeMark(ev, &b)
		}
		e.runEnd(assert.RunEnd{Interrupted: &assert.Cut{When: e.when(b.While)}}, ev.Seq, ev.T)
	case MarkDriverError:
		if e.decidePendingCut() {
			return
		}
		var b StepMark
		e.decodeMark(ev, &b)
		if e.phase == PhaseRestart {
			// The main checks passed; what failed is reading the thread
			// back from the restarted server.
			e.restartRead(assert.RestartRead{NotMade: &assert.StepError{Step: string(b.Step), Error: b.Error}}, ev)
			return
		}
		e.runEnd(assert.RunEnd{Undelivered: fmt.Sprintf("the driver could not go on (%s): %s; last seen: %s", b.Step, b.Error, assert.Summary(e.lastParent))}, ev.Seq, ev.T)
	case MarkSetupFailed:
		var b StepMark
		e.decodeMark(ev, &b)
		e.runEnd(assert.RunEnd{Setup: &assert.StepError{Step: string(b.Step), Error: b.Error}}, ev.Seq, ev.T)
	}
}

// decodeMark decodes a mark's body and reports whether it decoded; a
// malformed one is kept as a decode error (the mark still decides what it
// decides, with what could be read, unless its caller needs all of it).
func (e *Engine) decodeMark(ev *bundle.Event, v any) bool {
	if err := DecodeMark(ev, v); err != nil {
		e.keepError(ev.Seq, ev.Conn, err, ev.Body.Data)
		return false
	}
	return true
}

// when says when the run was cut: what the driver says it was doing (the
// mark's "while"), or, in bundles from drivers that did not say, the
// engine's own phase.
func (e *Engine) when(while string) string {
	if while != "" {
		return "while " + while
	}
	return "in phase " + string(e.phase)
}

// gate handles gate requests and releases.
func (e *Engine) gate(ev *bundle.Event) {
	path := ev.URL
	if u, err := url.Parse(ev.URL); err == nil {
		path = u.Path
	}
	if e.gatePath == "" {
		return
	}
	switch {
	case ev.Kind == bundle.KindGateRequest && path == e.gatePath:
		e.ms.GateRequested = true
	case ev.Kind == bundle.KindGateRequest && path == e.parentGatePath:
		e.ms.ParentGateRequested = true
		e.ms.ParentFinished = true // the reference marks the parent finished when it enters the gate
	case ev.Kind == bundle.KindGateRelease && path == e.gatePath:
		e.released = true
		e.ms.GateReleased = true
	}
}

// proc handles the server's lifecycle: an exit nobody asked for fails the run;
// any exit ends the calls still open.
func (e *Engine) proc(ev *bundle.Event) {
	if ev.Conn != e.serverConn {
		return
	}
	switch ev.Kind {
	case bundle.KindProcStart:
		e.serverSignalled, e.serverReady = false, false
	case bundle.KindProcSignal:
		// The SIGKILL to what is left of the process group (its provider
		// processes) after the server died is cleanup, not a request to stop.
		if !groupSignal(ev) {
			e.serverSignalled = true
		}
	case bundle.KindProcReady:
		e.serverReady = true
		if e.phase == PhaseRestart && e.restartStage == restartWaitReady {
			e.restartStage = restartWaitRead
		}
	case bundle.KindProcExit:
		if !e.serverSignalled {
			how := fmt.Sprintf("exit code %d", ev.Code)
			if ev.Name != "" {
				how = "signal " + ev.Name
			}
			if ev.Err != "" {
				how += " (" + ev.Err + ")"
			}
			when := "in phase " + string(e.phase)
			if !e.serverReady {
				when = "before it became ready"
			}
			e.runEnd(assert.RunEnd{ServerExit: &assert.ServerExit{How: how, Seq: ev.Seq, T: ev.T, When: when}}, ev.Seq, ev.T)
		}
		e.corr.ServerStopped(ev)
	}
}

func (e *Engine) keepError(seq uint64, conn string, err error, raw []byte) {
	e.decodeCount++
	if len(e.decodeErrors) < e.maxErrs {
		e.decodeErrors = append(e.decodeErrors, DecodeError{Seq: seq, Conn: conn, Err: err.Error(), Raw: clip(raw, 256)})
	}
}

// clip shortens b to at most n bytes for messages.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}

// groupSignal reports a signal sent to the rest of a process's group
// (record.Process marks it {"group":true}).
func groupSignal(ev *bundle.Event) bool {
	var a struct {
		Group bool `json:"group"`
	}
	return len(ev.Attrs) > 0 && json.Unmarshal(ev.Attrs, &a) == nil && a.Group
}
