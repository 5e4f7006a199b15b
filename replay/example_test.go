package replay_test

import (
	"fmt"

	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// The engine judges a run from its events alone: feed them in seq order and
// ask for the verdict.
func ExampleEngine() {
	s := synth.MustBuild(synth.Options{Scenario: "idle", Fault: "double-notification"})
	e := replay.NewEngine(nil)
	for i := range s.Events {
		if err := e.Feed(&s.Events[i]); err != nil {
			panic(err)
		}
	}
	v := e.Verdict()
	fmt.Println(v.Status, v.Failure.Check, "@", v.Failure.Seq)
	fmt.Print(v.Failure.Diff)
	// Output:
	// failed single-notification @ 44
	//   int(
	// - 	1,
	// + 	2,
	//   )
}
