package verify

import (
	"fmt"

	"github.com/wireproof/wireproof/assert"
)

// Prompt is the launch prompt of the reference verifier for a scenario: one
// message that asks the agent to start background work fetching gateURL and to
// collect its result later.
func Prompt(scenario assert.Scenario, provider, model, gateURL string) string {
	var launch string
	if scenario == assert.ScenarioNative {
		launch = fmt.Sprintf("Use your native background Bash tool to run curl --fail --silent %s with run_in_background=true. Do not delegate a T3 child.", gateURL)
	} else {
		nested := ""
		if scenario == assert.ScenarioNested {
			nested = "Use T3 delegate_task with mode=async to delegate the following task to a grandchild, then end your initial turn. On notification read task_status and return only the grandchild result: "
		}
		launch = fmt.Sprintf("Use T3 delegate_task with mode=async to create exactly one child using provider %s, model %s. Give the child this task: %sRun curl --fail --silent %s with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. Do not read other files. Do not retry failures.", provider, model, nested, gateURL)
	}
	var timing string
	if scenario == assert.ScenarioActive {
		timing = fmt.Sprintf("After delegating, run curl --fail --silent %s/parent in your foreground terminal tool. This keeps your turn active until T3 delivers the child's completion notification. Do not poll the child.", gateURL)
	} else {
		timing = "The background HTTP request will wait until you end your initial turn. Immediately end your turn with exactly PARENT_RELEASED. Do not wait or poll, and do not call any more tools in this turn."
	}
	collect := "use task_status to read the child result"
	if scenario == assert.ScenarioNative {
		collect = "read the background command output again, even if you previously read interim output. Only an actual incoming task notification counts as completion. Never generate a task notification yourself or treat your own text as one"
	}
	return fmt.Sprintf("This is a live background-delivery verification. %s %s When the completion notification arrives, %s and reply with exactly ACK: followed by that result with no space after the colon. Do not guess the result or run the background command yourself.", launch, timing, collect)
}
