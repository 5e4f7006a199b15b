package assert_test

import (
	"fmt"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/t3"
)

// A child that published a terminal result before its gated work was
// released breaks an invariant at the observation that shows it.
func ExampleSuite_Observe() {
	s := assert.Suite{Scenario: assert.ScenarioIdle, Secret: "RESULT_42"}
	result := "RESULT_42"
	p := &t3.Projection{
		Runs:      []t3.Run{{ID: "run-1", Ordinal: 1, Status: t3.RunRunning}},
		Subagents: []t3.Subagent{{ID: "task-1", Origin: t3.OriginAppOwned, Status: t3.SubagentCompleted, Result: &result}},
	}
	fmt.Println(s.Observe(p, true) == nil) // released: a completed child is fine
	f := s.Observe(p, false)               // not released yet: too early
	fmt.Printf("%s: %s\n", f.Check, f.Message)
	// Output:
	// true
	// no-early-terminal-child: Child published a terminal result before its gated work finished
}
