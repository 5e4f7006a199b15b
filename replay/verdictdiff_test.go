package replay_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// TestVerdictDiff: verdicts are compared by their JSON, and a difference is
// shown as a line diff of it (-a +b): the same text every time.
func TestVerdictDiff(t *testing.T) {
	passed := assert.Verdict{Status: assert.StatusPassed, Scenario: assert.ScenarioIdle, RunCount: 2, Restart: assert.StatusPassed}
	failed := passed
	failed.Status, failed.Restart = assert.StatusFailed, assert.StatusSkipped
	failed.Failure = &assert.Failure{Check: assert.CheckGateUsed, Message: "Child did not use the controlled gate", Seq: 7}
	tests := []struct {
		name string
		a, b assert.Verdict
		want string
	}{
		{"equal", passed, passed, ""},
		{"nil and empty ids serialise alike", passed, func() assert.Verdict { v := passed; v.AcknowledgementIDs = []string{}; return v }(), ""},
		{"failed instead", passed, failed, `  {
+   "status": "failed",
-   "status": "passed",
    "scenario": "idle",
+   "failure": {
+     "check": "gate-used",
+     "message": "Child did not use the controlled gate",
+     "seq": 7,
+     "t": 0
+   },
    "runCount": 2,
+   "restart": "skipped"
-   "restart": "passed"
  }
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := replay.VerdictDiff(tt.a, tt.b)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if again := replay.VerdictDiff(tt.a, tt.b); again != got {
				t.Errorf("a second diff differs:\n%s\n%s", got, again)
			}
		})
	}
}

// TestReplayDiverges: a bundle whose recorded verdict is not the one its
// events give replays as not reproduced, with the diff of the two.
func TestReplayDiverges(t *testing.T) {
	evs, err := synth.Recorded(synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle}))
	if err != nil {
		t.Fatal(err)
	}
	last := &evs[len(evs)-1]
	if last.Kind != bundle.KindVerdict {
		last = &evs[len(evs)-2]
	}
	if last.Kind != bundle.KindVerdict || !bytes.Contains(last.Body.Data, []byte(`"status":"passed"`)) {
		t.Fatalf("no passed verdict event at the end: %+v", last)
	}
	last.Body = bundle.Text(bytes.Replace(last.Body.Data, []byte(`"status":"passed"`), []byte(`"status":"failed"`), 1))
	path := filepath.Join(t.TempDir(), "tampered.zst")
	if err := synth.WriteBundle(path, evs); err != nil {
		t.Fatal(err)
	}
	res, err := replay.ReplayFile(context.Background(), path, delivery.Options(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Reproduced || !bytes.Contains([]byte(res.Diff), []byte("-   \"status\": \"failed\",\n")) || !bytes.Contains([]byte(res.Diff), []byte("+   \"status\": \"passed\",\n")) {
		t.Errorf("reproduced=%v, diff:\n%s\nwant not reproduced, recorded failed against replayed passed", res.Reproduced, res.Diff)
	}
}
