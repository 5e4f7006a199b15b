package verify_test

import (
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/verify"
)

// The launch prompt asks the agent for the scenario's background work against
// the gate, in the reference verifier's words.
func ExamplePrompt() {
	p := verify.Prompt("active", "claudeAgent", "claude-sonnet-4-6", "http://127.0.0.1:4000/gate")
	fmt.Println(strings.Contains(p, "curl --fail --silent http://127.0.0.1:4000/gate "))
	fmt.Println(strings.Contains(p, "curl --fail --silent http://127.0.0.1:4000/gate/parent"))
	fmt.Println(strings.Contains(p, "PARENT_RELEASED"))
	// Output:
	// true
	// true
	// false
}
