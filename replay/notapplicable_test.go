package replay_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// TestReplayNotApplicable: a bundle as verify writes a run whose scenario
// does not apply (synth.Inapplicable's native on a synthetic provider,
// given in EngineOptions.Scenarios: wireproof's own registers none): its
// header, the driver's done mark and the live engine's verdict, nothing
// driven in between. Replayed from the file with the same scenario, its
// verdict is not-applicable, with the provider and the reason, and it is
// the recorded one byte for byte.
func TestReplayNotApplicable(t *testing.T) {
	opts := synth.InapplicableOptions()
	h := synth.Header(assert.ScenarioNative)
	h.Manifest.Options = map[string]string{assert.OptionProviderDriver: string(synth.InapplicableProvider)}
	live := replay.NewLive(opts)
	if err := live.Header(h); err != nil {
		t.Fatal(err)
	}
	if got := live.Status().Phase; got != replay.PhaseNotApplicable {
		t.Fatalf("the live status after the header is %s, want %s: the driver would drive the run", got, replay.PhaseNotApplicable)
	}
	hb, _ := json.Marshal(h)
	done, err := replay.EncodeMark(replay.MarkPhase, replay.PhaseMark{Phase: replay.PhaseDone})
	if err != nil {
		t.Fatal(err)
	}
	done.Seq, done.T = 1, 1000
	if err := live.Event(done); err != nil {
		t.Fatal(err)
	}
	recorded := live.Verdict()
	vb, _ := json.Marshal(recorded)
	events := []bundle.Event{{Seq: 0, Kind: bundle.KindHeader, Body: bundle.Text(hb)}, *done, {Seq: 2, T: 2000, Kind: bundle.KindVerdict, Body: bundle.Text(vb)}}
	path := filepath.Join(t.TempDir(), "native-1.zst")
	if err := synth.WriteBundle(path, events); err != nil {
		t.Fatal(err)
	}
	res, err := replay.ReplayFile(context.Background(), path, &replay.Options{Engine: opts})
	if err != nil {
		t.Fatal(err)
	}
	want := assert.Verdict{
		Status: assert.StatusNotApplicable, Scenario: assert.ScenarioNative,
		Provider: synth.InapplicableProvider, Reason: synth.InapplicableReason,
		Suites: []assert.SuiteResult{{Suite: assert.SuiteBackgroundDelivery, Status: assert.StatusNotApplicable}, {Suite: assert.SuiteConformance, Status: assert.StatusPassed}},
	}
	if diff := cmp.Diff(want, res.Verdict); diff != "" {
		t.Errorf("replayed verdict (-want +got):\n%s", diff)
	}
	if !res.Reproduced || res.Reproduction() != replay.Reproduced {
		t.Errorf("replay %s, want reproduced:\n%s", res.Reproduction(), res.Diff)
	}
	rb, _ := json.Marshal(res.Verdict)
	if string(rb) != string(vb) {
		t.Errorf("replayed verdict bytes\n%s\nwant the recorded\n%s", rb, vb)
	}
}
