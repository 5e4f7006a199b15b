package assert

import (
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/t3"
)

// The final checks on the completing observation (BackgroundDelivery.Main).

func gateUsed(c Completing) *Failure {
	if c.Released {
		return nil
	}
	x := miss("a release of the child gate before completion", "the child gate was never released")
	x.RunID = lastRunID(c.Projection)
	return x
}

func delegationPath(c Completing) *Failure {
	p := c.Projection
	wantApp := 1
	if c.Scenario == ScenarioNative {
		wantApp = 0
	}
	got := countSubagents(p, t3.OriginAppOwned)
	if got == wantApp {
		return nil
	}
	x := diffMiss(wantApp, got)
	x.Expected = fmt.Sprintf("%d app_owned subagent(s)", wantApp)
	x.Seen = fmt.Sprintf("%d app_owned subagent(s): %s", got, subagentStates(p))
	return x
}

func typedNotification(c Completing) *Failure {
	if countItems(c.Projection, t3.ItemNotification) != 0 {
		return nil
	}
	return miss("a notification turn item", "turn items: "+itemTypes(c.Projection))
}

func singleUserMessage(c Completing) *Failure { return oneItem(c.Projection, t3.ItemUserMessage) }

// noFailedRun cannot fail through the engine: parent-not-failed sees the
// failed run first (see BackgroundDelivery).
func noFailedRun(c Completing) *Failure {
	for _, r := range c.Projection.Runs {
		if r.Status == t3.RunFailed {
			x := miss("no run failed", fmt.Sprintf("run %s (ordinal %d) is failed", r.ID, r.Ordinal))
			x.RunID = r.ID
			return x
		}
	}
	return nil
}

func singleNotification(c Completing) *Failure { return oneItem(c.Projection, t3.ItemNotification) }

// oneItem fails unless p has exactly one turn item of type typ.
func oneItem(p *t3.Projection, typ string) *Failure {
	n := countItems(p, typ)
	if n == 1 {
		return nil
	}
	x := diffMiss(1, n)
	x.Expected, x.Seen = "1 "+typ+" turn item", fmt.Sprintf("%d %s turn items", n, typ)
	return x
}

func childCompleted(c Completing) *Failure {
	for _, a := range appOwned(c.Projection) {
		if a.Status != t3.SubagentCompleted {
			x := diffMiss(t3.SubagentCompleted, a.Status)
			x.Seen = fmt.Sprintf("subagent %s is %s", a.ID, a.Status)
			return x
		}
	}
	return nil
}

// childResultKept cannot fail through the engine: terminal-child-has-secret
// sees the completed child without the secret first (see BackgroundDelivery).
func childResultKept(c Completing) *Failure {
	for _, a := range appOwned(c.Projection) {
		if !resultHas(a.Result, c.Secret) {
			return miss("a result containing "+c.Secret, fmt.Sprintf("subagent %s result %s", a.ID, showResult(a.Result)))
		}
	}
	return nil
}

func deliveryAcknowledged(c Completing) *Failure {
	for _, a := range appOwned(c.Projection) {
		state := ""
		if a.CompletionDelivery != nil {
			state = a.CompletionDelivery.State
		}
		if state != t3.DeliveryAcknowledged {
			x := diffMiss(t3.DeliveryAcknowledged, state)
			x.Seen = fmt.Sprintf("subagent %s completion delivery %q", a.ID, state)
			return x
		}
	}
	return nil
}

func nestedOwner(c Completing) *Failure {
	if c.Scenario != ScenarioNested || NestedChildThread(c.Projection) != "" {
		return nil
	}
	return miss("subagents[0].childThreadId set", "subagents: "+subagentStates(c.Projection))
}

// NestedChildThread is the child thread the nested checks read: the first
// subagent's childThreadId, as in the reference.
func NestedChildThread(p *t3.Projection) string {
	if len(p.Subagents) == 0 {
		return ""
	}
	return p.Subagents[0].ChildThreadID
}

// The checks of the nested child's read (BackgroundDelivery.Nested).

func nestedGrandchild(n NestedRead) *Failure {
	if n.Child == nil {
		return miss("a projection of the child thread", n.Failed)
	}
	if got := len(n.Child.Subagents); got != 1 {
		x := diffMiss(1, got)
		x.Expected, x.Seen = "1 subagent of the child thread", fmt.Sprintf("%d subagents of the child thread", got)
		return x
	}
	return nil
}

func nestedResult(n NestedRead) *Failure {
	if n.Child == nil || len(n.Child.Subagents) == 0 {
		return nil // nested-grandchild's to judge
	}
	if a := n.Child.Subagents[0]; !resultHas(a.Result, n.Secret) {
		return miss("a grandchild result containing "+n.Secret, fmt.Sprintf("grandchild %s result %s", a.ID, showResult(a.Result)))
	}
	return nil
}

// The checks after the nested read (BackgroundDelivery.Closing): the
// active scenario's two, or continuation-run in the others.

func noStaleBackground(c Completing) *Failure {
	for i, pt := range c.Projection.ProviderThreads {
		if n := len(pt.PendingBackgroundTasks); n != 0 {
			x := diffMiss(0, n)
			x.Expected = "no pending background tasks"
			x.Seen = fmt.Sprintf("provider thread %d (%s) has %d pending background task(s)", i, pt.ID, n)
			return x
		}
	}
	return nil
}

func activeSingleRun(c Completing) *Failure {
	p := c.Projection
	if c.Scenario != ScenarioActive || len(p.Runs) == 1 {
		return nil
	}
	got := len(p.Runs)
	x := diffMiss(1, got)
	x.Expected, x.Seen = "1 run", fmt.Sprintf("%d runs: %s", got, runStates(p))
	x.RunID = lastRunID(p)
	return x
}

func activeParentGate(c Completing) *Failure {
	if c.Scenario != ScenarioActive || c.ParentGateRequested {
		return nil
	}
	return miss("a request to the parent's gate", "no request to the parent's gate")
}

func continuationRun(c Completing) *Failure {
	p := c.Projection
	if c.Scenario == ScenarioActive || len(p.Runs) >= 2 {
		return nil
	}
	x := miss("at least 2 runs", fmt.Sprintf("%d run(s): %s", len(p.Runs), runStates(p)))
	x.RunID = lastRunID(p)
	return x
}

func appOwned(p *t3.Projection) []t3.Subagent {
	var out []t3.Subagent
	for _, a := range p.Subagents {
		if a.Origin == t3.OriginAppOwned {
			out = append(out, a)
		}
	}
	return out
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
