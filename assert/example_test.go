package assert_test

import (
	"fmt"
	"slices"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/t3"
)

// A child that published a terminal result before its gated work was
// released breaks an invariant at the observation that shows it: the
// engine runs the Observation list on every projection of the parent.
func ExampleBackgroundDeliverySuite() {
	s := assert.Suite{Scenario: assert.ScenarioIdle, Secret: "RESULT_42"}
	result := "RESULT_42"
	p := &t3.Projection{
		Runs:      []t3.Run{{ID: "run-1", Ordinal: 1, Status: t3.RunRunning}},
		Subagents: []t3.Subagent{{ID: "task-1", Origin: t3.OriginAppOwned, Status: t3.SubagentCompleted, Result: &result}},
	}
	invariants := assert.BackgroundDelivery.Observation
	fmt.Println(invariants.Run(assert.Observed{Suite: s, Projection: p, Released: true}) == nil) // released: a completed child is fine
	f := invariants.Run(assert.Observed{Suite: s, Projection: p})                                // not released yet: too early
	fmt.Printf("%s: %s\n", f.Check, f.Message)
	// Output:
	// true
	// no-early-terminal-child: Child published a terminal result before its gated work finished
}

// The catalogue lists every check of every suite, in order, with its stage.
func ExampleCatalogue() {
	for _, c := range assert.Catalogue()[:4] {
		fmt.Println(c.Suite, c.Stage, c.ID)
	}
	// Output:
	// background-delivery observation parent-not-failed
	// background-delivery observation no-early-terminal-child
	// background-delivery observation terminal-child-has-secret
	// background-delivery final gate-used
}

// A check of the background-delivery suite is a value too: a pure test of
// what its stage observes. This one, run after the closing checks, fails a
// run that left more than three runs.
func ExampleCheck() {
	fewRuns := assert.Check[assert.Completing]{
		ID: "few-runs", Message: "Too many runs", Stage: assert.StageClosing,
		Test: func(c assert.Completing) *assert.Failure {
			if n := len(c.Projection.Runs); n > 3 {
				return &assert.Failure{Expected: "at most 3 runs", Seen: fmt.Sprintf("%d runs", n)}
			}
			return nil
		},
	}
	closing := slices.Concat(assert.BackgroundDelivery.Closing, assert.Checks[assert.Completing]{fewRuns})
	p := &t3.Projection{Runs: make([]t3.Run, 4)}
	f := closing.Run(assert.Completing{Suite: assert.Suite{Scenario: assert.ScenarioIdle}, Projection: p})
	fmt.Println(f.Check, "|", f.Message, "|", f.Seen)
	// Output: few-runs | Too many runs | 4 runs
}
