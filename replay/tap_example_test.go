package replay_test

import (
	"fmt"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/replay"
)

// A Tap sees the calls of the whole bundle in the pass that computes the
// verdict: here a call made after the driver's end mark, which the checks
// (and OnEvent) no longer read, and a call the bundle cut off, ended at the
// bundle's last event.
func ExampleTap() {
	evs := stdio(
		`c2s {"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`s2c {"jsonrpc":"2.0","id":1,"result":{}}`,
		`c2s {"jsonrpc":"2.0","id":2,"method":"tools/call"}`,
		`s2c {"jsonrpc":"2.0","id":2,"result":{}}`,
		`c2s {"jsonrpc":"2.0","id":3,"method":"ping"}`,
	)
	done, err := replay.EncodeMark(replay.MarkPhase, replay.PhaseMark{Phase: replay.PhaseDone})
	if err != nil {
		panic(err)
	}
	// The end mark after the first call: the other calls come after it.
	evs = append(evs[:2], append([]bundle.Event{*done}, evs[2:]...)...)
	for i := range evs {
		evs[i].Seq, evs[i].T = uint64(i+1), int64(i+1)
	}
	checked := 0
	v := run(&replay.EngineOptions{
		OnEvent: func(*protocol.Event) { checked++ },
		Tap: &replay.Tap{Protocol: func(pe *protocol.Event) {
			if pe.Kind != protocol.KindNotification {
				line := fmt.Sprintf("@%d %s %s id %s", pe.Seq, pe.Kind, pe.Method, pe.ID)
				if pe.Why != "" {
					line += " (" + pe.Why + ")"
				}
				fmt.Println(line)
			}
		}},
	}, evs)
	fmt.Println("events the checks read:", checked, "verdict:", v.Status)
	// Output:
	// @1 request initialize id 1
	// @2 response initialize id 1
	// @4 request tools/call id 2
	// @5 response tools/call id 2
	// @6 request ping id 3
	// @6 end ping id 3 (the bundle ended)
	// events the checks read: 2 verdict: passed
}
