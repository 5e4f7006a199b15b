package replay_test

import (
	"fmt"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay"
)

// steady is a scenario of its own: a run whose manifest names it passes if
// the server process started exactly once. It reads only proc events.
type steady struct {
	replay.BaseScenario
	applies bool
	starts  int
	verdict *assert.Verdict
}

func (s *steady) Manifest(m bundle.Manifest) { s.applies = m.Scenario == "steady" }

func (s *steady) Event(ev *bundle.Event) {
	if ev.Kind == bundle.KindProcStart && ev.Conn == replay.ServerConn {
		s.starts++
	}
}

// End decides at the end of the bundle (or at the driver's end mark).
func (s *steady) End(at *bundle.Event) {
	v := assert.Verdict{Status: assert.StatusPassed, Scenario: "steady"}
	if s.starts != 1 {
		v.Status = assert.StatusFailed
		v.Failure = &assert.Failure{Check: "one-start", Message: "The server was restarted",
			Expected: "1 start", Seen: fmt.Sprintf("%d starts", s.starts), Seq: at.Seq, T: at.T}
	}
	s.verdict = &v
}

func (s *steady) Decided() bool { return s.verdict != nil }

func (s *steady) Status() replay.Status {
	if s.verdict == nil {
		return replay.Status{Phase: replay.PhaseRunning}
	}
	return replay.Status{Phase: replay.Phase(s.verdict.Status), Failure: s.verdict.Failure}
}

func (s *steady) Verdict() (assert.Verdict, bool) { return *s.verdict, s.applies }

// A scenario is a value passed to the engine, as suites and routes are; the
// engine needs no change for it.
func ExampleScenario() {
	sc := replay.Scenario{ID: "steady", New: func(*replay.ScenarioEnv) replay.ScenarioRun { return &steady{} }}
	e := replay.NewEngine(&replay.EngineOptions{Scenarios: []replay.Scenario{sc}})
	_ = e.FeedHeader(bundle.Header{Format: bundle.FormatVersion, Manifest: bundle.Manifest{Scenario: "steady"}})
	for i, kind := range []bundle.Kind{bundle.KindProcStart, bundle.KindProcExit, bundle.KindProcStart} {
		_ = e.Feed(&bundle.Event{Seq: uint64(i + 1), T: int64(i + 1), Kind: kind, Conn: replay.ServerConn})
	}
	v := e.Verdict()
	for _, s := range v.Suites {
		fmt.Println(s.Suite, s.Status)
	}
	fmt.Println(v.Failure.Check, "@", v.Failure.Seq, v.Failure.Seen)
	// Output:
	// steady failed
	// protocol-conformance passed
	// one-start @ 3 2 starts
}
