package replay

import (
	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/protocol/effectrpc"
)

// A Scenario is what a verification run checks beyond the event suites: a
// state machine over the bundle's events (the driver's marks, the gate, the
// server process, the decoded calls and protocol events) that runs its
// checks at its own stages and says what the live driver must do next
// (Status). It is passed to the engine as a value, in EngineOptions.Scenarios
// as event suites and routes are; the engine itself knows none. T3's
// background delivery (package delivery) is one.
type Scenario struct {
	// ID names the scenario's suite in the verdict's Suites.
	ID string
	// New starts the scenario on one bundle. The run is fed in seq order,
	// by one goroutine, from the first event until Decided.
	New func(env *ScenarioEnv) ScenarioRun
}

// ScenarioRun is a scenario on one bundle. Until it has Decided, the engine
// gives it, in seq order: the manifest, every protocol event after the event
// suites judged it (until the end mark), every step of the Effect RPC calls
// that is not a decode error, and the events the protocol layer does not
// decode (marks but the driver's phase marks; gate.*; proc.*). After the
// server's proc.exit is handed to it, the calls still open on the server's
// sockets end (their steps follow).
type ScenarioRun interface {
	// Manifest is the bundle's, from its header.
	Manifest(m bundle.Manifest)
	// Event is a mark, gate or proc event.
	Event(ev *bundle.Event)
	// RPC is a step of an Effect RPC call (Step.Call is set).
	RPC(s *effectrpc.Step)
	// Protocol is a protocol event, after the event suites judged it.
	Protocol(pe *protocol.Event)
	// KeepBody says whether the HTTP decoder keeps the response body of the
	// exchange req opens, for Protocol to read (protocol.HTTPOptions.Keep).
	KeepBody(req *bundle.Event) bool
	// End decides what is still undecided: the bundle or the checks ended
	// (at is the last event that mattered to the checks). The Effect RPC
	// calls still open were ended first.
	End(at *bundle.Event)
	// Decided reports whether the scenario's verdict is decided; from then
	// on it is fed nothing.
	Decided() bool
	// Status is the scenario's progress, which the live driver acts on.
	Status() Status
	// Verdict is the scenario's verdict once decided, with ok false when
	// the bundle is no run of the scenario (a plain recording): then its
	// suite is not listed.
	Verdict() (v assert.Verdict, ok bool)
}

// KnownValues is implemented by a ScenarioRun that decodes large values of
// Effect RPC answers and remembers the last ones: the Correlator takes an
// Exit value equal to one of them by a memcmp instead of scanning it again
// (effectrpc.Options.KnownValue).
type KnownValues interface {
	KnownValue(rest []byte) int
}

// ScenarioEnv is what the engine gives a scenario.
type ScenarioEnv struct{ e *Engine }

// KeepError keeps a frame, body or mark that could not be decoded as a
// decode error of the bundle.
func (env *ScenarioEnv) KeepError(seq uint64, conn string, err error, raw []byte) {
	env.e.keepError(seq, conn, err, raw)
}

// DecodeMark decodes a mark's body (DecodeMark) and reports whether it
// decoded; a malformed one is kept as a decode error.
func (env *ScenarioEnv) DecodeMark(ev *bundle.Event, v any) bool { return env.e.decodeMark(ev, v) }

// Mattered notes that the event at seq/t mattered to the checks before the
// engine does (it notes every event it feeds the scenario once the scenario
// returns undecided): the last one locates what the end of the bundle
// decides.
func (env *ScenarioEnv) Mattered(seq uint64, t int64) { env.e.lastSeq, env.e.lastT = seq, t }

// MaxBody is the cap on a kept HTTP response body (EngineOptions.MaxBody).
func (env *ScenarioEnv) MaxBody() int { return env.e.maxBody }

// ServerConn is the connection name of the server process the recorder
// supervises: its proc.exit ends every call still open.
const ServerConn = "server"

// BaseScenario gives a ScenarioRun the methods of what it does not read:
// embed it and write the others. It ignores the manifest, the events, the
// RPC steps and the protocol events, and keeps no HTTP body.
type BaseScenario struct{}

// Manifest implements ScenarioRun.
func (BaseScenario) Manifest(bundle.Manifest) {}

// Event implements ScenarioRun.
func (BaseScenario) Event(*bundle.Event) {}

// RPC implements ScenarioRun.
func (BaseScenario) RPC(*effectrpc.Step) {}

// Protocol implements ScenarioRun.
func (BaseScenario) Protocol(*protocol.Event) {}

// KeepBody implements ScenarioRun.
func (BaseScenario) KeepBody(*bundle.Event) bool { return false }
