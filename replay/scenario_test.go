package replay_test

import (
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// firstMark decides at the first mark it is fed, failing with check.
type firstMark struct {
	replay.BaseScenario
	check   string
	fed     int // events fed after it decided: must stay 0
	verdict *assert.Verdict
}

func (s *firstMark) Event(ev *bundle.Event) {
	if s.verdict != nil {
		s.fed++
		return
	}
	if ev.Kind == bundle.KindMark {
		s.verdict = &assert.Verdict{Status: assert.StatusFailed, Failure: &assert.Failure{Check: s.check, Seq: ev.Seq, T: ev.T}}
	}
}

func (s *firstMark) End(*bundle.Event) {
	if s.verdict == nil {
		s.verdict = &assert.Verdict{Status: assert.StatusPassed}
	}
}

func (s *firstMark) Decided() bool { return s.verdict != nil }

func (s *firstMark) Status() replay.Status { return replay.Status{Phase: replay.PhaseRunning} }

func (s *firstMark) Verdict() (assert.Verdict, bool) { return *s.verdict, true }

// TestScenarios: every scenario given runs on the bundle; the verdict
// lists each, in order, before the event suites, and fails with the first
// failure in that order; the engine's Status is the first scenario's; a
// scenario that decided is fed nothing more while the others go on.
func TestScenarios(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle})
	var runs []*firstMark
	early := replay.Scenario{ID: "early", New: func(*replay.ScenarioEnv) replay.ScenarioRun {
		r := &firstMark{check: "first-mark"}
		runs = append(runs, r)
		return r
	}}
	e := replay.NewEngine(&replay.EngineOptions{Scenarios: []replay.Scenario{delivery.Scenario, early}})
	var phases []replay.Phase
	for i := range s.Events {
		if err := e.Feed(&s.Events[i]); err != nil {
			t.Fatal(err)
		}
		if p := e.Status().Phase; len(phases) == 0 || phases[len(phases)-1] != p {
			phases = append(phases, p)
		}
	}
	v := e.Verdict()
	var got []string
	for _, r := range v.Suites {
		got = append(got, r.Suite+" "+string(r.Status))
	}
	want := []string{"background-delivery passed", "early failed", "protocol-conformance passed"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("suites %v, want %v", got, want)
	}
	if v.Status != assert.StatusFailed || v.Failure.Check != "first-mark" || v.Scenario != assert.ScenarioIdle {
		t.Errorf("verdict %s %+v scenario %q: want failed by first-mark, the run fields background-delivery's (idle)", v.Status, v.Failure, v.Scenario)
	}
	if len(runs) != 1 || runs[0].fed != 0 {
		t.Errorf("the early scenario was started %d times and fed %d events after it decided", len(runs), runs[0].fed)
	}
	if phases[len(phases)-1] != replay.PhasePassed || len(phases) < 3 {
		t.Errorf("phases %v: want background-delivery's (running, restart, passed)", phases)
	}
}
