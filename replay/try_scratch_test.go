package replay_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

func TestScratch(t *testing.T) {
	for _, sc := range []string{"idle", "active", "native", "nested"} {
		for _, nd := range []bool{false, true} {
			s := synth.MustBuild(synth.Options{Scenario: sc, NDJSON: nd, StringIDs: nd})
			e := replay.NewEngine(nil)
			for i := range s.Events {
				if err := e.Feed(&s.Events[i]); err != nil {
					t.Fatal(err)
				}
			}
			v := e.Verdict()
			b, _ := json.Marshal(v)
			errs, n := e.DecodeErrors()
			fmt.Println(sc, nd, string(b), n, errs)
		}
	}
	for _, f := range synth.Faults() {
		for _, sc := range f.Scenarios {
			s := synth.MustBuild(synth.Options{Scenario: sc, Fault: f.Name})
			e := replay.NewEngine(nil)
			for i := range s.Events {
				if err := e.Feed(&s.Events[i]); err != nil {
					t.Fatal(err)
				}
			}
			v := e.Verdict()
			got := "<pass>"
			var seq uint64
			if v.Failure != nil {
				got, seq = v.Failure.Check, v.Failure.Seq
			}
			ok := got == f.Check && seq == s.At[f.At]
			if !ok {
				b, _ := json.Marshal(v)
				fmt.Println("MISMATCH", f.Name, sc, "want", f.Check, s.At[f.At], "got", got, seq, string(b))
			}
		}
	}
}
