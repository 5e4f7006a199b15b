package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goldenVerdicts holds the `replay --json` lines of every bundle under
// fixtures/golden, as committed: the safety net that keeps every verdict,
// recorded verdict comparison, decode error and event count unchanged while
// replay's internals change. Regenerate with -update only for a change that
// is meant to alter a verdict, and say why in the commit.
const goldenVerdicts = "testdata/replay/golden-verdicts.ndjson"

// TestReplayGoldenVerdicts: `wireproof replay --json` on every golden bundle
// (synthetic and live) prints exactly the committed lines.
func TestReplayGoldenVerdicts(t *testing.T) {
	got, _ := replayOut(t, replayOptions{JSON: true, Jobs: 2}, golden)
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenVerdicts), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenVerdicts, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenVerdicts)
	if err != nil {
		t.Fatalf("%v (run with -update to generate)", err)
	}
	wantLines, gotLines := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	if len(wantLines) < 40 {
		t.Fatalf("only %d golden lines: the corpus is missing", len(wantLines))
	}
	if diff := cmp.Diff(wantLines, gotLines); diff != "" {
		t.Errorf("replay --json of the golden bundles changed (-committed +now):\n%s", diff)
	}
}
