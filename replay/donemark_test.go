package replay_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// TestVerdictDecidedAtDoneMark: the driver takes the live verdict after its
// done mark, and the recorder may deliver more events before it does. An
// event that would decide the run, recorded after the done mark, changes the
// verdict neither live nor in replay: both decide at the mark, from exactly
// the events before it, and agree. A Tap still sees the later events.
func TestVerdictDecidedAtDoneMark(t *testing.T) {
	for _, tc := range []struct {
		name, fault, label string // the fault's deciding event, labelled label, comes after the done mark
		check              string // what that event would decide
		tapped             bool   // the Tap gets a protocol event after the mark (an HTTP read)
	}{
		{"failing restart read", "restart-lost-ack", synth.LabelRestartRead, assert.CheckRestartAcknowledgement, true},
		{"server crash", "server-crash", synth.LabelFault, assert.CheckServerAlive, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := synth.MustBuild(synth.Options{Scenario: "idle", Fault: tc.fault})
			at := s.At[tc.label] // the deciding event's seq, which is also its index

			// Without a done mark the event decides the run: the case is real.
			e := replay.NewEngine(delivery.EngineOptions(nil))
			feedAll(t, e, s.Events[:at+1])
			if f := e.Verdict().Failure; f == nil || f.Check != tc.check || f.Seq != at {
				t.Fatalf("without a done mark: failure %+v, want %s at seq %d", f, tc.check, at)
			}

			// The driver's done mark just before it; the rest moves one on.
			done, err := replay.EncodeMark(replay.MarkPhase, replay.PhaseMark{Phase: replay.PhaseDone})
			if err != nil {
				t.Fatal(err)
			}
			done.Seq, done.T = at, s.Events[at].T
			evs := append(append([]bundle.Event(nil), s.Events[:at]...), *done)
			for _, ev := range s.Events[at:] {
				ev.Seq++
				evs = append(evs, ev)
			}

			// What the verdict must be: the events up to the mark alone.
			ref := replay.NewEngine(delivery.EngineOptions(nil))
			feedAll(t, ref, evs[:at+1])
			want := ref.Verdict()
			if want.Failure == nil || want.Failure.Check == tc.check || want.Failure.Seq != at {
				t.Fatalf("up to the done mark: failure %+v, want one that is not %s, at the mark (seq %d)", want.Failure, tc.check, at)
			}

			// Live, with a Tap: the recorder delivers every event before the
			// driver takes the verdict.
			var tapped []uint64
			l := replay.NewLive(delivery.EngineOptions(&replay.EngineOptions{Tap: &replay.Tap{Protocol: func(pe *protocol.Event) {
				if pe.Seq > at {
					tapped = append(tapped, pe.Seq)
				}
			}}}))
			for i := range evs {
				if err := l.Event(&evs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.WaitFor(at); err != nil {
				t.Fatal(err)
			}
			live := l.Verdict()
			if diff := cmp.Diff(want, live); diff != "" {
				t.Errorf("live verdict (-up to the mark +live):\n%s", diff)
			}
			if tc.tapped && len(tapped) == 0 {
				t.Error("the Tap saw no protocol event after the done mark")
			}

			// Replay of the bundle the driver writes: the events, then the
			// live verdict.
			vb, err := json.Marshal(live)
			if err != nil {
				t.Fatal(err)
			}
			last := evs[len(evs)-1]
			evs = append(evs, bundle.Event{Seq: last.Seq + 1, T: last.T + 1, Kind: bundle.KindVerdict, Body: bundle.Text(vb)})
			path := t.TempDir() + "/run.zst"
			if err := synth.WriteBundle(path, evs); err != nil {
				t.Fatal(err)
			}
			res, err := replay.ReplayFile(context.Background(), path, delivery.Options(nil))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, res.Verdict); diff != "" {
				t.Errorf("replayed verdict (-up to the mark +replayed):\n%s", diff)
			}
			if !res.Reproduced {
				t.Errorf("replay does not reproduce the live verdict:\n%s", res.Diff)
			}
		})
	}
}
