package triage_test

import (
	"context"
	"fmt"

	"github.com/wireproof/wireproof/triage"
)

// Load takes a recording apart: its calls, and both verdicts.
func ExampleLoad() {
	tl, err := triage.Load(context.Background(), "../fixtures/golden/live/idle-duplicate-notification.zst", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("verdict:", tl.Replayed.Verdict.Status, tl.Replayed.Verdict.Failure.Check, "at seq", tl.Replayed.Verdict.Failure.Seq)
	fmt.Println("reproduced:", tl.Replayed.Reproduced)
	c := tl.Calls[0]
	fmt.Println("first call:", c.Method, c.Outcome, "seq", c.StartSeq, "to", c.EndSeq)
	// Output:
	// verdict: failed single-notification at seq 138
	// reproduced: true
	// first call: orchestration.launchThread success seq 27 to 44
}
