package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/replay/synth"
)

// writeNotApplicable writes, at dir/native-1.zst, the bundle verify
// records of native on the Codex CLI: the header, the done mark and the
// verdict, nothing driven.
func writeNotApplicable(t *testing.T, dir string) string {
	t.Helper()
	events, err := synth.Recorded(synth.NotDriven(synth.Options{Scenario: assert.ScenarioNative, Provider: assert.ProviderCodex}))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "native-1.zst")
	if err := synth.WriteBundle(path, events); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNotApplicableShown: a run whose scenario does not apply to its
// provider is shown as such, with the reason, by every verb that shows a
// verdict, never as a pass: replay's console (N/A, its own count in the
// summary, exit 0: it reproduced and nothing failed), --json, --junit (a
// skipped case with the reason), report, diff and index --stats (not a
// run of its scenario).
func TestNotApplicableShown(t *testing.T) {
	dir := t.TempDir()
	na := writeNotApplicable(t, dir)
	reason := delivery.NotApplicable[0].Reason

	code, out, stderr := runCLI(t, "replay", na)
	if code != exitOK {
		t.Fatalf("replay exit %d, want 0\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"N/A  native  " + na, "not applicable to codex: " + reason, "reproduced",
		"1 bundle(s): 0 passed, 0 failed, 0 diverged, 0 unreadable, 1 not applicable"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay's console lacks %q:\n%s", want, out)
		}
	}

	_, out, _ = runCLI(t, "replay", "--json", na)
	var line replayJSON
	if err := json.Unmarshal([]byte(out), &line); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	type shown struct {
		Status   assert.Status
		Outcome  string
		Provider assert.Provider
		Reason   string
	}
	if line.Verdict == nil {
		t.Fatalf("replay --json gave no verdict: %s", out)
	}
	got := shown{line.Status, string(line.Outcome), line.Verdict.Provider, line.Verdict.Reason}
	if diff := cmp.Diff(shown{assert.StatusNotApplicable, "reproduced", assert.ProviderCodex, reason}, got); diff != "" {
		t.Errorf("replay --json (-want +got):\n%s", diff)
	}

	junit := filepath.Join(dir, "junit.xml")
	if code, out, stderr := runCLI(t, "replay", "--junit", junit, na); code != exitOK {
		t.Fatalf("replay --junit exit %d\n%s%s", code, out, stderr)
	}
	s, _ := readJUnit(t, junit)
	if s.Skipped != 1 || s.Failures != 0 || len(s.Cases) != 1 || s.Cases[0].Skipped == nil || s.Cases[0].Skipped.Message != "not applicable to codex: "+reason {
		t.Errorf("JUnit: skipped %d failures %d, cases %+v; want one skipped case with the reason", s.Skipped, s.Failures, s.Cases)
	}

	html := filepath.Join(dir, "na.html")
	if code, out, stderr := runCLI(t, "report", "-o", html, na); code != exitOK {
		t.Fatalf("report exit %d\n%s%s", code, out, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<strong class="not-applicable">not-applicable</strong>`, `id="not-applicable"`, "not applicable to codex: "} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	code, out, _ = runCLI(t, "diff", na, golden+"/native.zst")
	if code != exitCheckFailed || !strings.Contains(out, "not-applicable scenario native  not applicable to codex") {
		t.Errorf("diff exit %d, want 1 and A's verdict not applicable to codex:\n%s", code, out)
	}

	code, out, _ = runCLI(t, "index", "--stats", na, golden+"/native.zst")
	if code != exitOK {
		t.Fatalf("index --stats exit %d\n%s", code, out)
	}
	fields := strings.Fields(strings.SplitN(out, "\n", 3)[1])
	if diff := cmp.Diff([]string{"native", "1", "1", "0", "0.0", "no", "0", "0", "0", "1"}, fields); diff != "" {
		t.Errorf("index --stats native row (-want +got):\n%s\n%s", diff, out)
	}
}

// TestNotApplicableExit: verify's exit status when nothing was verified is
// its own code, 8, and silent (the console said what and why).
func TestNotApplicableExit(t *testing.T) {
	err := notApplicableError{"nothing was verified"}
	if got := exitCode(err, false); got != exitNotApplicable || exitNotApplicable != 8 {
		t.Errorf("exit %d, want 8", got)
	}
	if !isSilent(err) {
		t.Error("notApplicableError is printed again")
	}
}

// TestVerifyNativeOnCodex: verify --scenario native with the real Codex
// CLI records the run's header, its done mark and the verdict, and drives
// nothing (no server process, no provider; the working tree's artifacts
// are recorded as for every run): the verdict is not-applicable
// with the reason, the console says so and that nothing was verified, and
// the run exits 8. replay reproduces the verdict from the file.
func TestVerifyNativeOnCodex(t *testing.T) {
	cli := testkit.CodexCLI(t, "../..")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, "verify", "--provider", "codex", "--provider-cli", cli, "--scenario", "native", "--out", out)
	if code != exitNotApplicable {
		t.Fatalf("verify exit %d, want %d\nstdout: %s\nstderr: %s", code, exitNotApplicable, stdout, stderr)
	}
	path := filepath.Join(out, "native-1.zst")
	for _, want := range []string{"N/A native  ", path, "not applicable to codex: " + delivery.NotApplicable[0].Reason, "nothing was verified"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("verify's console lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "PASS") {
		t.Errorf("verify's console reads as a pass:\n%s", stdout)
	}
	r, err := bundle.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := assert.ManifestProvider(r.Header().Manifest); got != assert.ProviderCodex {
		t.Errorf("the manifest's provider driver is %q, want codex", got)
	}
	var kinds []string
	for ev, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != bundle.KindArtifact { // the working tree's state (dirty.txt, a patch) is recorded first
			kinds = append(kinds, string(ev.Kind)+" "+ev.Name)
		}
	}
	if diff := cmp.Diff([]string{string(bundle.KindMark) + " phase", string(bundle.KindVerdict) + " "}, kinds); diff != "" {
		t.Errorf("events after the header (-want +got): something was driven\n%s", diff)
	}
	code, stdout, _ = runCLI(t, "replay", path)
	if code != exitOK || !strings.Contains(stdout, "N/A  native  "+path) || !strings.Contains(stdout, "reproduced") {
		t.Errorf("replay exit %d, want 0 with N/A, reproduced:\n%s", code, stdout)
	}
}
