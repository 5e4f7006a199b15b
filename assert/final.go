package assert

import (
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/t3"
)

// MainChecks runs the final checks on the completing observation up to the
// point where the nested scenario needs the child's projection: gate-used,
// delegation-path, typed-notification, single-user-message, no-failed-run,
// single-notification, then per app-owned child child-completed,
// child-result-kept and delivery-acknowledged, then (nested) nested-owner.
//
// Two of these cannot fail through the engine, because the invariants of
// Observe run first on the same observation and fail earlier: no-failed-run
// (parent-not-failed sees the failed run) and child-result-kept (a completed
// child without the secret fails terminal-child-has-secret). They are kept
// here, in the reference order, so that a suite run on its own matches it.
func (s Suite) MainChecks(p *t3.Projection, f Facts) *Failure {
	if !f.Released {
		x := fail(CheckGateUsed, "a release of the child gate before completion", "the child gate was never released")
		x.RunID = lastRunID(p)
		return x
	}
	wantApp := 1
	if s.Scenario == ScenarioNative {
		wantApp = 0
	}
	if got := countSubagents(p, t3.OriginAppOwned); got != wantApp {
		x := diffFail(CheckDelegationPath, wantApp, got)
		x.Expected = fmt.Sprintf("%d app_owned subagent(s)", wantApp)
		x.Seen = fmt.Sprintf("%d app_owned subagent(s): %s", got, subagentStates(p))
		return x
	}
	notifications := countItems(p, t3.ItemNotification)
	if notifications == 0 {
		return fail(CheckTypedNotification, "a notification turn item", "turn items: "+itemTypes(p))
	}
	if got := countItems(p, t3.ItemUserMessage); got != 1 {
		x := diffFail(CheckSingleUserMessage, 1, got)
		x.Expected, x.Seen = "1 user_message turn item", fmt.Sprintf("%d user_message turn items", got)
		return x
	}
	for _, r := range p.Runs {
		if r.Status == t3.RunFailed {
			x := fail(CheckNoFailedRun, "no run failed", fmt.Sprintf("run %s (ordinal %d) is failed", r.ID, r.Ordinal))
			x.RunID = r.ID
			return x
		}
	}
	if notifications != 1 {
		x := diffFail(CheckSingleNotification, 1, notifications)
		x.Expected, x.Seen = "1 notification turn item", fmt.Sprintf("%d notification turn items", notifications)
		return x
	}
	for _, a := range p.Subagents {
		if a.Origin != t3.OriginAppOwned {
			continue
		}
		if a.Status != t3.SubagentCompleted {
			x := diffFail(CheckChildCompleted, t3.SubagentCompleted, a.Status)
			x.Seen = fmt.Sprintf("subagent %s is %s", a.ID, a.Status)
			return x
		}
		if !resultHas(a.Result, s.Secret) {
			return fail(CheckChildResultKept, "a result containing "+s.Secret,
				fmt.Sprintf("subagent %s result %s", a.ID, showResult(a.Result)))
		}
		state := ""
		if a.CompletionDelivery != nil {
			state = a.CompletionDelivery.State
		}
		if state != t3.DeliveryAcknowledged {
			x := diffFail(CheckDeliveryAcknowledged, t3.DeliveryAcknowledged, state)
			x.Seen = fmt.Sprintf("subagent %s completion delivery %q", a.ID, state)
			return x
		}
	}
	if s.Scenario == ScenarioNested {
		if NestedChildThread(p) == "" {
			return fail(CheckNestedOwner, "subagents[0].childThreadId set", "subagents: "+subagentStates(p))
		}
	}
	return nil
}

// NestedChildThread is the child thread the nested checks read: the first
// subagent's childThreadId, as in the reference.
func NestedChildThread(p *t3.Projection) string {
	if len(p.Subagents) == 0 {
		return ""
	}
	return p.Subagents[0].ChildThreadID
}

// NestedChecks runs nested-grandchild and nested-result on the child thread's
// projection read after the main checks.
func (s Suite) NestedChecks(child *t3.Projection) *Failure {
	if got := len(child.Subagents); got != 1 {
		x := diffFail(CheckNestedGrandchild, 1, got)
		x.Expected, x.Seen = "1 subagent of the child thread", fmt.Sprintf("%d subagents of the child thread", got)
		return x
	}
	if a := child.Subagents[0]; !resultHas(a.Result, s.Secret) {
		return fail(CheckNestedResult, "a grandchild result containing "+s.Secret,
			fmt.Sprintf("grandchild %s result %s", a.ID, showResult(a.Result)))
	}
	return nil
}

// ClosingChecks runs the checks after the nested read: no-stale-background,
// then active-single-run and active-parent-gate in active, continuation-run
// otherwise.
func (s Suite) ClosingChecks(p *t3.Projection, f Facts) *Failure {
	for i, pt := range p.ProviderThreads {
		if n := len(pt.PendingBackgroundTasks); n != 0 {
			x := diffFail(CheckNoStaleBackground, 0, n)
			x.Expected = "no pending background tasks"
			x.Seen = fmt.Sprintf("provider thread %d (%s) has %d pending background task(s)", i, pt.ID, n)
			return x
		}
	}
	if s.Scenario == ScenarioActive {
		if got := len(p.Runs); got != 1 {
			x := diffFail(CheckActiveSingleRun, 1, got)
			x.Expected, x.Seen = "1 run", fmt.Sprintf("%d runs: %s", got, runStates(p))
			x.RunID = lastRunID(p)
			return x
		}
		if !f.ParentGateRequested {
			return fail(CheckActiveParentGate, "a request to the parent's gate", "no request to the parent's gate")
		}
		return nil
	}
	if got := len(p.Runs); got < 2 {
		x := fail(CheckContinuationRun, "at least 2 runs", fmt.Sprintf("%d run(s): %s", got, runStates(p)))
		x.RunID = lastRunID(p)
		return x
	}
	return nil
}

func countSubagents(p *t3.Projection, origin string) int {
	n := 0
	for _, a := range p.Subagents {
		if a.Origin == origin {
			n++
		}
	}
	return n
}

func countItems(p *t3.Projection, typ string) int {
	n := 0
	for _, it := range p.TurnItems {
		if it.Type == typ {
			n++
		}
	}
	return n
}

func itemTypes(p *t3.Projection) string {
	var b []string
	for _, it := range p.TurnItems {
		b = append(b, it.Type)
	}
	return "[" + strings.Join(b, " ") + "]"
}

// RunStates summarises the runs of p as "[id:status ...]".
func runStates(p *t3.Projection) string {
	var b []string
	for _, r := range p.Runs {
		b = append(b, r.ID+":"+r.Status)
	}
	return "[" + strings.Join(b, " ") + "]"
}

// subagentStates summarises the subagents of p as "[id origin status delivery=state ...]".
func subagentStates(p *t3.Projection) string {
	var b []string
	for _, a := range p.Subagents {
		d := "none"
		if a.CompletionDelivery != nil {
			d = a.CompletionDelivery.State
		}
		b = append(b, fmt.Sprintf("%s %s %s delivery=%s", a.ID, a.Origin, a.Status, d))
	}
	return "[" + strings.Join(b, ", ") + "]"
}

// Summary says what a projection showed, for a failure that has no other
// value to point at (a stream that ended early): run and subagent states.
func Summary(p *t3.Projection) string {
	if p == nil {
		return "no projection of the thread was seen"
	}
	return "runs " + runStates(p) + "; subagents " + subagentStates(p)
}
