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
// PhaseRunning is both. PhasePassed, PhaseFailed, PhaseSkipped and
// PhaseNotApplicable are the verdict's statuses; a scenario has phases of its own between them (what
// the live driver must do next: delivery.PhaseNestedRead, ...).
const (
	PhasePassed = Phase(assert.StatusPassed)
	PhaseFailed = Phase(assert.StatusFailed)
	// PhaseSkipped: the stream ended and held no verification run to check.
	PhaseSkipped = Phase(assert.StatusSkipped)
	// PhaseNotApplicable: the run's scenario cannot apply to its provider
	// (decided at the header): the live driver drives nothing.
	PhaseNotApplicable = Phase(assert.StatusNotApplicable)
)

// Status is the engine's progress, which the live driver acts on.
type Status struct {
	Phase         Phase
	ChildThreadID string // the thread the driver must read next (delivery.PhaseNestedRead)
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
	// Scenarios are what verification runs are checked for beyond the event
	// suites (see Scenario), each fed the bundle until it decides; the
	// verdict lists each one that applies, before the event suites. nil
	// means none: a verification run's verdict is then its event suites'
	// alone. delivery.Scenarios() is the list wireproof records and
	// replays.
	Scenarios []Scenario
	// Suites are event suites run after ConformanceSuite, in order, on the
	// bundles they apply to.
	Suites []EventSuite
	// Routes are tried before the engine's own (see Routes), so a decoder
	// can take the connections that carry its protocol. An HTTP exchange
	// one takes is not the engine's HTTP decoder's, whose responses (the
	// bodies ScenarioRun.KeepBody asks for) the scenarios read.
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

// Engine computes a verdict from the ordered event stream of one run. It is
// what the live driver runs on every recorded event and what replay runs on
// the file, so both reach the same verdict. Once decided, the verdict is
// sticky: later events (shutdown, the verdict event, the trailer) are
// ignored. Memory is bounded by the open calls and what the scenarios keep,
// not by the stream. Not safe for
// concurrent use; see Live.
type Engine struct {
	maxBody, maxErrs int
	// cut: the bundle ended without its trailer (Session.Result), so its
	// end is where the recording was cut, not where the traffic ended.
	cut bool

	started bool
	next    uint64
	events  uint64
	lastSeq uint64 // last event that mattered to the checks
	lastT   int64

	corr   *effectrpc.Correlator
	scens  []ScenarioRun // EngineOptions.Scenarios, started
	scenID []string      // their ids
	ended  bool          // finalize decided what was undecided

	decodeErrors []DecodeError
	decodeCount  int

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
	e := &Engine{maxBody: 64 << 20, maxErrs: 100}
	suites := []EventSuite{ConformanceSuite}
	var routes []protocol.Route
	var onEvent func(*protocol.Event)
	var scenarios []Scenario
	if opts != nil {
		scenarios = opts.Scenarios
		suites = append(suites, opts.Suites...)
		routes, onEvent, e.onBundleEvent = opts.Routes, opts.OnEvent, opts.OnBundleEvent
		if opts.MaxBody > 0 {
			e.maxBody = opts.MaxBody
		}
		if opts.MaxDecodeErrors > 0 {
			e.maxErrs = opts.MaxDecodeErrors
		}
		if opts.Tap != nil {
			e.tap = &tapState{Tap: *opts.Tap}
		}
	}
	env := &ScenarioEnv{e}
	for _, sc := range scenarios {
		e.scens, e.scenID = append(e.scens, sc.New(env)), append(e.scenID, sc.ID)
	}
	emit := e.onRPC
	if e.tap != nil {
		emit = e.rpcStep
	}
	e.corr = effectrpc.NewCorrelator(emit, &effectrpc.Options{Path: t3.PathWebSocket, KnownValue: e.knownValue()})
	e.jsonrpc = protocol.NewJSONRPCDecoder()
	e.httpDec = protocol.NewHTTPDecoder(&protocol.HTTPOptions{Keep: e.keepBody, MaxBody: e.maxBody})
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
	for _, s := range e.scens {
		if !s.Decided() {
			s.Protocol(pe) // after the suites, as the event that made it is fed
		}
	}
}

// onRPC receives the correlated RPC timeline: the conformance suite's
// protocol events, the decode errors, then the scenarios.
func (e *Engine) onRPC(r *effectrpc.Step) {
	e.conf.effectEvent(r)
	if r.Err != nil {
		if e.conf.done && e.decided() {
			return // past the cut-off: nothing judges it
		}
		e.keepError(r.Seq, r.Conn, r.Err, r.Raw)
		return
	}
	if r.Call == nil {
		return
	}
	for _, s := range e.scens {
		if !s.Decided() {
			s.RPC(r)
		}
	}
}

// keepBody is the HTTP decoder's Keep: whether a scenario reads the
// response of the exchange req opens.
func (e *Engine) keepBody(req *bundle.Event) bool {
	keep := false
	for _, s := range e.scens {
		if !s.Decided() && s.KeepBody(req) {
			keep = true // every scenario is asked: each notes the exchanges it reads
		}
	}
	return keep
}

// knownValue is the Correlator's KnownValue: a value one of the scenarios
// decoded last, or nil when none remembers any.
func (e *Engine) knownValue() func([]byte) int {
	var known []func([]byte) int
	for _, s := range e.scens {
		if k, ok := s.(KnownValues); ok {
			known = append(known, k.KnownValue)
		}
	}
	switch len(known) {
	case 0:
		return nil
	case 1:
		return known[0]
	}
	return func(rest []byte) int {
		for _, k := range known {
			if n := k(rest); n > 0 {
				return n
			}
		}
		return 0
	}
}

// wire feeds the protocol layer, until the checks' cut-off: the driver's
// done mark (where Feed decides the verdict), the verdict event or the end of
// the bundle.
func (e *Engine) wire(ev *bundle.Event) {
	switch ev.Kind {
	case bundle.KindWSOpen, bundle.KindWSMessage, bundle.KindWSClose, bundle.KindStdioLine,
		bundle.KindHTTPRequest, bundle.KindHTTPResponse, bundle.KindHTTPBody, bundle.KindHTTPEnd,
		bundle.KindProcStart: // a stdio channel's process: its argv says what it speaks
		e.router.Feed(ev)
	case bundle.KindProcSignal:
		if ev.Conn == ServerConn {
			e.router.ServerStopping(ev) // what its processes leave unanswered now is the stop's
		}
	case bundle.KindProcExit:
		e.router.Feed(ev) // it ends the process's stdio channel
		if ev.Conn == ServerConn {
			e.router.Stop(ev, "the server stopped")
			if e.decided() {
				e.corr.ServerStopped(ev) // else Feed does, after the scenarios saw the exit
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

// decided reports whether the verdict is decided: every scenario decided
// (with none, once the checks ended).
func (e *Engine) decided() bool {
	if e.ended {
		return true
	}
	if len(e.scens) == 0 {
		return false
	}
	for _, s := range e.scens {
		if !s.Decided() {
			return false
		}
	}
	return true
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
			for _, s := range e.scens {
				s.Manifest(h.Manifest)
			}
			e.conf.manifest(h.Manifest)
		}
		return nil
	case bundle.KindMark:
		if ev.Name != MarkPhase {
			e.scenarioEvent(ev)
		}
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
		// the response bodies the scenarios read (keepBody).
	case bundle.KindGateRequest, bundle.KindGateRelease:
		e.scenarioEvent(ev)
	case bundle.KindProcStart, bundle.KindProcReady, bundle.KindProcSignal, bundle.KindProcExit:
		e.scenarioEvent(ev)
		if ev.Kind == bundle.KindProcExit && ev.Conn == ServerConn {
			e.corr.ServerStopped(ev) // no answer can come now: the open calls end
		}
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

// scenarioEvent hands a mark, gate or proc event to the scenarios still
// undecided.
func (e *Engine) scenarioEvent(ev *bundle.Event) {
	for _, s := range e.scens {
		if !s.Decided() {
			s.Event(ev)
		}
	}
}

// Status reports the progress so far: the first scenario's (phase,
// milestones, failure); without one, running until the verdict is decided,
// then skipped.
func (e *Engine) Status() Status {
	if len(e.scens) > 0 {
		return e.scens[0].Status()
	}
	if e.ended {
		return Status{Phase: PhaseSkipped}
	}
	return Status{Phase: PhaseRunning}
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
	var v assert.Verdict
	var scen []assert.SuiteResult
	for i, s := range e.scens {
		sv, ok := s.Verdict()
		if !ok {
			continue // not a run of this scenario
		}
		r := assert.SuiteResult{Suite: e.scenID[i], Status: sv.Status}
		if sv.Failure != nil {
			f := *sv.Failure
			r.Failure = &f
		}
		if scen == nil {
			v = sv // the verdict's run fields are the first scenario's
		} else if v.Status == assert.StatusPassed && sv.Failure != nil {
			f := *sv.Failure
			v.Status, v.Failure = assert.StatusFailed, &f
		}
		scen = append(scen, r)
	}
	if scen == nil {
		// A plain recording: only the event suites run.
		v = assert.Verdict{Status: assert.StatusPassed}
	}
	v.Suites = append(scen, suites...)
	for _, s := range suites {
		// A protocol the run broke fails it, whether its scenario passed
		// or did not apply.
		if (v.Status == assert.StatusPassed || v.Status == assert.StatusNotApplicable) && s.Failure != nil {
			f := *s.Failure
			v.Status, v.Failure = assert.StatusFailed, &f
		}
	}
	return v
}

// endWhy is why the decoders' open calls end at the end of the stream: a
// bundle cut short (protocol.WhyCut) leaves undecided what only a whole
// recording can show.
func (e *Engine) endWhy() string {
	if e.cut {
		return protocol.WhyCut
	}
	return "the bundle ended"
}

func (e *Engine) finalize() {
	if !e.conf.done {
		e.router.Stop(&bundle.Event{Seq: e.lastSeq, T: e.lastT}, e.endWhy())
		e.conf.done = true
	}
	if e.decided() {
		return
	}
	at := &bundle.Event{Seq: e.lastSeq, T: e.lastT}
	e.corr.End(at)
	for _, s := range e.scens {
		if !s.Decided() {
			s.End(at)
		}
	}
	e.ended = true
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
