package synth_test

import (
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// TestWithStrayExit: the stray Exit fails protocol-conformance at its seq
// (answers-request) and leaves the background-delivery suite's verdict as
// it was, passed or failed.
func TestWithStrayExit(t *testing.T) {
	for _, c := range []struct {
		fault string
		bg    assert.Status
	}{{"", assert.StatusPassed}, {"double-notification", assert.StatusFailed}} {
		s := synth.WithStrayExit(synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle, Fault: c.fault}))
		e := replay.NewEngine(delivery.EngineOptions(nil))
		for i := range s.Events {
			if err := e.Feed(&s.Events[i]); err != nil {
				t.Fatal(err)
			}
		}
		v := e.Verdict()
		if len(v.Suites) != 2 || v.Suites[0].Status != c.bg || v.Suites[1].Status != assert.StatusFailed {
			t.Fatalf("fault %q: suites %+v, want background-delivery %s and protocol-conformance failed", c.fault, v.Suites, c.bg)
		}
		f := v.Suites[1].Failure
		if f.Check != assert.CheckAnswersRequest || f.Seq != s.At[synth.LabelStrayExit] {
			t.Errorf("fault %q: conformance failure %s @%d, want %s @%d", c.fault, f.Check, f.Seq, assert.CheckAnswersRequest, s.At[synth.LabelStrayExit])
		}
	}
}
