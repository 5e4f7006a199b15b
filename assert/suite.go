package assert

import (
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/t3"
)

// Scenario is a scenario of the background-delivery suite: what a
// verification run drives and what its checks expect. The constants are the
// one place the names are spelled; the manifest, the run mark and the
// verdict carry them.
type Scenario string

// Scenarios of the background-delivery suite.
const (
	ScenarioIdle   Scenario = "idle"   // the parent is idle when the child completes
	ScenarioActive Scenario = "active" // the parent is in a turn (its own foreground gate)
	ScenarioNative Scenario = "native" // the provider's own subagent, no app-owned task
	ScenarioNested Scenario = "nested" // the child delegates to a grandchild
)

// Scenarios lists every scenario, in the order the tools run them.
func Scenarios() []Scenario {
	return []Scenario{ScenarioIdle, ScenarioActive, ScenarioNative, ScenarioNested}
}

// Known reports whether s is one of Scenarios.
func (s Scenario) Known() bool {
	switch s {
	case ScenarioIdle, ScenarioActive, ScenarioNative, ScenarioNested:
		return true
	}
	return false
}

// Provider is a provider driver of the server (T3's driver kind), the one a
// verification run's threads run on. The constants are the one place the
// names are spelled; the manifest carries them (ManifestProvider).
type Provider string

// Provider drivers.
const (
	ProviderClaude Provider = "claudeAgent" // the Claude Code CLI
	ProviderCodex  Provider = "codex"       // the Codex CLI (codex app-server)
)

// OptionProviderDriver is the manifest option (bundle.Manifest.Options)
// naming the run's provider driver.
const OptionProviderDriver = "providerDriver"

// ManifestProvider is the provider driver a bundle's manifest names
// (Options[OptionProviderDriver]); a manifest that names none is a run on
// Claude, as every run was before a second provider existed.
func ManifestProvider(m bundle.Manifest) Provider {
	if p := m.Options[OptionProviderDriver]; p != "" {
		return Provider(p)
	}
	return ProviderClaude
}

// NotApplicable is a scenario that cannot apply to a provider, and why: a
// sentence a user can act on, which the verdict carries as its Reason.
type NotApplicable struct {
	Scenario Scenario
	Provider Provider
	Reason   string
}

// Inapplicable returns the entry of list that says scenario s cannot apply
// to provider p, or nil when the run applies.
func Inapplicable(list []NotApplicable, s Scenario, p Provider) *NotApplicable {
	for i := range list {
		if list[i].Scenario == s && list[i].Provider == p {
			return &list[i]
		}
	}
	return nil
}

// Suite holds what the checks of one run compare against. It is a value,
// carried in what each check observes: the checks are pure functions of their
// arguments, so the live engine and replay reach the same failures from the
// same observations.
type Suite struct {
	Scenario Scenario
	Secret   string // the gate's RESULT_<uuid>; a result or message carries the work if it contains it
}

// Facts are the milestones the final checks read besides the projection.
type Facts struct {
	Released            bool // the child gate was released before the completing observation
	ParentGateRequested bool // a request to the parent's foreground gate was seen
}

// miss is a check's failure: what was expected and what was seen. Checks.Run
// names the check; the engine locates it (Seq, T, ThreadID).
func miss(expected, seen string) *Failure {
	return &Failure{Expected: expected, Seen: seen}
}

// diffMiss is miss with a diff of the compared values.
func diffMiss(want, got any) *Failure {
	f := miss(fmt.Sprint(want), fmt.Sprint(got))
	f.Diff = valueDiff(want, got)
	return f
}

// lastRunID names the newest run of p, for context in a failure.
func lastRunID(p *t3.Projection) string {
	if len(p.Runs) == 0 {
		return ""
	}
	return p.Runs[len(p.Runs)-1].ID
}

// The per-observation invariants (BackgroundDelivery.Observation).

func parentNotFailed(o Observed) *Failure {
	for _, r := range o.Projection.Runs {
		if r.Status == t3.RunFailed {
			f := miss("no run failed", fmt.Sprintf("run %s (ordinal %d) is failed", r.ID, r.Ordinal))
			f.RunID = r.ID
			return f
		}
	}
	return nil
}

func noEarlyTerminalChild(o Observed) *Failure {
	if o.Released {
		return nil
	}
	for _, a := range o.Projection.Subagents {
		if t3.SubagentTerminal(a.Status) {
			f := miss("no terminal subagent before the gate was released",
				fmt.Sprintf("subagent %s (%s) is %s before the gate was released", a.ID, a.Origin, a.Status))
			f.RunID = lastRunID(o.Projection)
			return f
		}
	}
	return nil
}

func terminalChildHasSecret(o Observed) *Failure {
	for _, a := range o.Projection.Subagents {
		if t3.SubagentTerminal(a.Status) && !resultHas(a.Result, o.Secret) {
			f := miss(fmt.Sprintf("the result of terminal subagent %s contains %s", a.ID, o.Secret),
				fmt.Sprintf("subagent %s is %s with result %s", a.ID, a.Status, showResult(a.Result)))
			f.RunID = lastRunID(o.Projection)
			return f
		}
	}
	return nil
}

// Completed reports whether p proves delivery: an assistant message carries the
// secret and every run is terminal (vacuously true with no runs, as in the
// reference).
func (s Suite) Completed(p *t3.Projection) bool {
	if len(AcknowledgementIDs(p, s.Secret)) == 0 {
		return false
	}
	for _, r := range p.Runs {
		if !t3.RunTerminal(r.Status) {
			return false
		}
	}
	return true
}

// ParentFinished is the reference's parentFinished for a parent observation: its
// first run completed.
func ParentFinished(p *t3.Projection) bool {
	return len(p.Runs) > 0 && p.Runs[0].Status == t3.RunCompleted
}

// NestedChildFinished is the reference's nestedChildFinished for a child
// observation: the child's first run completed and it has delegated once.
func NestedChildFinished(child *t3.Projection) bool {
	return len(child.Runs) > 0 && child.Runs[0].Status == t3.RunCompleted && len(child.Subagents) == 1
}

// Delivered reports whether some subagent's completion reached the parent.
func Delivered(p *t3.Projection) bool {
	for _, a := range p.Subagents {
		if d := a.CompletionDelivery; d != nil && (d.State == t3.DeliveryDelivered || d.State == t3.DeliveryAcknowledged) {
			return true
		}
	}
	return false
}

// AcknowledgementIDs are the ids of the assistant messages carrying the secret.
func AcknowledgementIDs(p *t3.Projection, secret string) []string {
	var ids []string
	for _, m := range p.Messages {
		if m.Role == t3.RoleAssistant && strings.Contains(m.Text, secret) {
			ids = append(ids, m.ID)
		}
	}
	return ids
}

func resultHas(result *string, secret string) bool {
	return result != nil && strings.Contains(*result, secret)
}

func showResult(result *string) string {
	if result == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *result)
}
