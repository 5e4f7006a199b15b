package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
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
	if testkit.Update() {
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
	wantLines, gotLines := parseLines(t, string(want)), parseLines(t, got)
	if len(wantLines) < 40 {
		t.Fatalf("only %d golden lines: the corpus is missing", len(wantLines))
	}
	// The verdicts name the suites that ran since the suites became data;
	// the committed lines predate that. Every golden bundle is a
	// verification run: both suites ran, and conformance passed on all but
	// the protocol faults (replay/synth), whose run passes and whose
	// verdict is conformance's failure.
	for _, l := range gotLines {
		v, _ := l["verdict"].(map[string]any)
		suites, _ := v["suites"].([]any)
		var names []string
		for _, s := range suites {
			m := s.(map[string]any)
			names = append(names, m["suite"].(string))
			if m["suite"] != "protocol-conformance" || m["status"] == "passed" {
				continue
			}
			sf, _ := m["failure"].(map[string]any)
			vf, _ := v["failure"].(map[string]any)
			bg, _ := suites[0].(map[string]any)
			if sf == nil || vf == nil || sf["check"] != vf["check"] || bg["status"] != "passed" {
				t.Errorf("%s: protocol conformance %v (%v) beside background delivery %v; want it only where the run passed, as the verdict's failure", l["path"], m["status"], m["failure"], bg["status"])
			}
		}
		if diff := cmp.Diff([]string{"background-delivery", "protocol-conformance"}, names); diff != "" {
			t.Errorf("%s: suites (-want +got):\n%s", l["path"], diff)
		}
		delete(v, "suites")
	}
	if diff := cmp.Diff(wantLines, gotLines); diff != "" {
		t.Errorf("replay --json of the golden bundles changed (-committed +now):\n%s", diff)
	}
}

func parseLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		out = append(out, m)
	}
	return out
}
