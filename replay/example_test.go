package replay_test

import (
	"fmt"

	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// The engine judges a run from its events alone: feed them in seq order and
// ask for the verdict. The scenario a verification run is checked for is
// passed to it: here T3's background delivery.
func ExampleEngine() {
	s := synth.MustBuild(synth.Options{Scenario: "idle", Fault: "double-notification"})
	e := replay.NewEngine(&replay.EngineOptions{Scenarios: delivery.Scenarios()})
	for i := range s.Events {
		if err := e.Feed(&s.Events[i]); err != nil {
			panic(err)
		}
	}
	v := e.Verdict()
	fmt.Println(v.Status, v.Failure.Check, "@", v.Failure.Seq)
	fmt.Println(v.Failure.Message)
	fmt.Println("expected:", v.Failure.Expected)
	fmt.Println("seen:", v.Failure.Seen)
	// Output:
	// failed single-notification @ 44
	// One completion produced multiple notifications
	// expected: 1 notification turn item
	// seen: 2 notification turn items
}
