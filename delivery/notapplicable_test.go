package delivery_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// decision is what the engine says once it has read a bundle's header, and
// the verdict it then gives.
type decision struct {
	Phase    replay.Phase
	Status   assert.Status
	Provider assert.Provider
	Reason   string
	Suites   []string
}

// decide feeds the header of a run of scenario whose manifest names
// provider ("" names none), then the rest of the synthetic run, to an
// engine with spec: the phase right after the header, and the verdict.
func decide(t *testing.T, spec delivery.Spec, scenario assert.Scenario, provider assert.Provider) decision {
	t.Helper()
	s := synth.MustBuild(synth.Options{Scenario: scenario, Provider: provider})
	e := replay.NewEngine(&replay.EngineOptions{Scenarios: []replay.Scenario{spec.Scenario()}})
	var d decision
	for i := range s.Events {
		if err := e.Feed(&s.Events[i]); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			d.Phase = e.Status().Phase
		}
	}
	v := e.Verdict()
	d.Status, d.Provider, d.Reason = v.Status, v.Provider, v.Reason
	for _, r := range v.Suites {
		d.Suites = append(d.Suites, r.Suite+" "+string(r.Status))
	}
	return d
}

// TestNotApplicableDecision: a run whose manifest's scenario and provider
// driver a spec lists is decided at the header, not-applicable with the
// spec's reason and the provider, whatever the events after it say; any
// other pair is judged by the checks. A manifest without providerDriver is
// a Claude run. The pairs are synthetic, so the mechanism is tested apart
// from what delivery.NotApplicable registers.
func TestNotApplicableDecision(t *testing.T) {
	const why = "nested cannot apply to acme: acme has no sub-agents; verify acme with idle."
	spec := delivery.Spec{Checks: assert.BackgroundDelivery, NotApplicable: []assert.NotApplicable{
		{Scenario: assert.ScenarioNested, Provider: "acme", Reason: why},
		{Scenario: assert.ScenarioIdle, Provider: assert.ProviderClaude, Reason: "idle is not for Claude"},
	}}
	passed := []string{"background-delivery passed", "protocol-conformance passed"}
	for _, tc := range []struct {
		name     string
		scenario assert.Scenario
		provider assert.Provider
		want     decision
	}{
		{"listed pair", assert.ScenarioNested, "acme", decision{Phase: replay.PhaseNotApplicable, Status: assert.StatusNotApplicable, Provider: "acme", Reason: why,
			Suites: []string{"background-delivery not-applicable", "protocol-conformance passed"}}},
		{"same provider, other scenario", assert.ScenarioActive, "acme", decision{Phase: replay.PhaseRunning, Status: assert.StatusPassed, Suites: passed}},
		{"same scenario, other provider", assert.ScenarioNested, assert.ProviderCodex, decision{Phase: replay.PhaseRunning, Status: assert.StatusPassed, Suites: passed}},
		{"no providerDriver is Claude", assert.ScenarioIdle, "", decision{Phase: replay.PhaseNotApplicable, Status: assert.StatusNotApplicable, Provider: assert.ProviderClaude, Reason: "idle is not for Claude",
			Suites: []string{"background-delivery not-applicable", "protocol-conformance passed"}}},
		{"claudeAgent named", assert.ScenarioIdle, assert.ProviderClaude, decision{Phase: replay.PhaseNotApplicable, Status: assert.StatusNotApplicable, Provider: assert.ProviderClaude, Reason: "idle is not for Claude",
			Suites: []string{"background-delivery not-applicable", "protocol-conformance passed"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decide(t, spec, tc.scenario, tc.provider)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Without a list, every pair applies.
	if diff := cmp.Diff(decision{Phase: replay.PhaseRunning, Status: assert.StatusPassed, Suites: passed},
		decide(t, delivery.Spec{Checks: assert.BackgroundDelivery}, assert.ScenarioNested, "acme")); diff != "" {
		t.Errorf("an empty list (-want +got):\n%s", diff)
	}
}

// TestEveryScenarioApplies: what wireproof records and replays
// (delivery.Scenario) registers no pair as not applying: native on the
// Codex CLI is judged like every other run (the server delivers the
// command's completion; docs/providers.md), and so is every scenario on
// either driver.
func TestEveryScenarioApplies(t *testing.T) {
	if len(delivery.NotApplicable) != 0 {
		t.Errorf("delivery.NotApplicable registers %+v, want none", delivery.NotApplicable)
	}
	spec := delivery.Spec{Checks: assert.BackgroundDelivery, NotApplicable: delivery.NotApplicable}
	for _, sc := range assert.Scenarios() {
		for _, p := range []assert.Provider{"", assert.ProviderClaude, assert.ProviderCodex} {
			if got := decide(t, spec, sc, p); got.Phase != replay.PhaseRunning || got.Status != assert.StatusPassed {
				t.Errorf("%s on %q: phase %s, verdict %s; want it judged (running, passed)", sc, p, got.Phase, got.Status)
			}
		}
	}
	// The engine wireproof records with judges native on Codex too.
	s := synth.MustBuild(synth.Options{Scenario: assert.ScenarioNative, Provider: assert.ProviderCodex})
	if v := verdict(t, delivery.EngineOptions(nil), s); v.Status != assert.StatusPassed {
		t.Errorf("delivery.EngineOptions on native/codex: %s %q, want passed", v.Status, v.Reason)
	}
}

// TestNotApplicableStillConforms: the event suites judge a run that does
// not apply all the same: a protocol it broke fails it, with the reason
// kept beside the failure.
func TestNotApplicableStillConforms(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: assert.ScenarioNative, Provider: synth.InapplicableProvider})
	// A response to no request, on a JSON-RPC stdio channel, before the end.
	bad := bundle.Event{Kind: bundle.KindStdioLine, Conn: "provider-1", Dir: bundle.DirServerToClient,
		Body: bundle.Text([]byte(`{"jsonrpc":"2.0","id":77,"result":{}}`))}
	events := append([]bundle.Event{s.Events[0], bad}, s.Events[1:]...)
	for i := range events {
		events[i].Seq = uint64(i)
	}
	v := verdict(t, synth.InapplicableOptions(), synth.Script{Events: events})
	var suites []string
	for _, r := range v.Suites {
		suites = append(suites, r.Suite+" "+string(r.Status))
	}
	got := map[string]any{"status": v.Status, "reason": v.Reason == synth.InapplicableReason, "provider": v.Provider, "suites": suites}
	if v.Failure != nil {
		got["check"] = v.Failure.Check
	}
	want := map[string]any{"status": assert.StatusFailed, "reason": true, "provider": synth.InapplicableProvider, "check": assert.CheckAnswersRequest,
		"suites": []string{"background-delivery not-applicable", "protocol-conformance failed"}}
	if diff := cmp.Diff(want, got); diff != "" {
		b, _ := json.Marshal(v)
		t.Errorf("(-want +got):\n%s\n%s", diff, b)
	}
}
