package delivery_test

import (
	"slices"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

func verdict(t *testing.T, opts *replay.EngineOptions, s synth.Script) assert.Verdict {
	t.Helper()
	e := replay.NewEngine(opts)
	for i := range s.Events {
		if err := e.Feed(&s.Events[i]); err != nil {
			t.Fatal(err)
		}
	}
	return e.Verdict()
}

// TestChecksAreAValue: the scenario runs the lists it was built with. A
// suite with one more closing check fails a passing run with that check,
// at the completing observation, and the suite wireproof records
// (Scenario) is not changed by it.
func TestChecksAreAValue(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle})
	checks := assert.BackgroundDelivery
	checks.Closing = slices.Concat(checks.Closing, assert.Checks[assert.Completing]{{
		ID: "no-runs", Message: "A run was made", Stage: assert.StageClosing,
		Test: func(c assert.Completing) *assert.Failure {
			return &assert.Failure{Expected: "no runs", Seen: "some"}
		},
	}})
	got := verdict(t, &replay.EngineOptions{Scenarios: []replay.Scenario{delivery.New(checks)}}, s)
	if got.Status != assert.StatusFailed || got.Failure.Check != "no-runs" || got.Suites[0].Suite != assert.SuiteBackgroundDelivery {
		t.Fatalf("with the extra check: %s %+v, suites %+v; want failed by no-runs in background-delivery", got.Status, got.Failure, got.Suites)
	}
	if want := verdict(t, delivery.EngineOptions(nil), s); want.Status != assert.StatusPassed {
		t.Errorf("delivery.Scenario after building another suite: %s %+v, want passed", want.Status, want.Failure)
	}
	if n, m := len(assert.BackgroundDelivery.Closing), len(checks.Closing); n+1 != m {
		t.Errorf("assert.BackgroundDelivery.Closing has %d checks, the other suite %d: building it changed the reference's", n, m)
	}
}

// TestNoScenario: an engine given no scenario judges a verification run by
// its event suites alone; the same run with delivery.Scenarios() lists
// background-delivery first.
func TestNoScenario(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle, Fault: "double-notification"})
	bare := verdict(t, nil, s)
	if bare.Status != assert.StatusPassed || len(bare.Suites) != 1 || bare.Suites[0].Suite != assert.SuiteConformance {
		t.Errorf("without a scenario: %s, suites %+v; want passed with protocol-conformance alone", bare.Status, bare.Suites)
	}
	full := verdict(t, delivery.EngineOptions(nil), s)
	if full.Status != assert.StatusFailed || full.Failure.Check != assert.CheckSingleNotification || len(full.Suites) != 2 || full.Suites[0].Suite != assert.SuiteBackgroundDelivery {
		t.Errorf("with delivery: %s %+v, suites %+v; want failed by %s, background-delivery listed first", full.Status, full.Failure, full.Suites, assert.CheckSingleNotification)
	}
}
