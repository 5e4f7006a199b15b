package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
	"github.com/wireproof/wireproof/triage"
)

// writeNotApplicable writes, at dir/native-1.zst, the bundle verify
// records of a run that does not apply under synth.Inapplicable (native on
// a synthetic provider; wireproof's own scenario registers no such pair):
// the header, the done mark and the verdict, nothing driven.
func writeNotApplicable(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "native-1.zst")
	if err := synth.WriteInapplicable(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// replayWith runs the replay verb in-process with its options, the bundles
// judged by spec: its exit code and stdout.
func replayWith(t *testing.T, opts replayOptions, spec delivery.Spec, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts.stdout, opts.stderr, opts.delivery = &stdout, &stderr, &spec
	if opts.Jobs == 0 {
		opts.Jobs = 1
	}
	code := exitCode(runReplay(context.Background(), opts, args), false)
	return code, stdout.String()
}

// TestNotApplicableShown: a run whose scenario does not apply to its
// provider is shown as such, with the reason, by every verb that shows a
// verdict, never as a pass: replay's console (N/A, its own count in the
// summary, exit 0: it reproduced and nothing failed), --json, --junit (a
// skipped case with the reason), report, diff and index --stats (not a
// run of its scenario). The verbs that judge the bundle are given the
// synthetic scenario through their options (replay's, triage's); index
// reads the recorded verdict, through the CLI.
func TestNotApplicableShown(t *testing.T) {
	dir := t.TempDir()
	na := writeNotApplicable(t, dir)
	spec := synth.Inapplicable()
	reason := synth.InapplicableReason
	to := "not applicable to " + string(synth.InapplicableProvider) + ": "

	code, out := replayWith(t, replayOptions{}, spec, na)
	if code != exitOK {
		t.Fatalf("replay exit %d, want 0\n%s", code, out)
	}
	for _, want := range []string{"N/A  native  " + na, to + reason, "reproduced",
		"1 bundle(s): 0 passed, 0 failed, 0 diverged, 0 unreadable, 1 not applicable"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay's console lacks %q:\n%s", want, out)
		}
	}

	_, out = replayWith(t, replayOptions{JSON: true}, spec, na)
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
	if diff := cmp.Diff(shown{assert.StatusNotApplicable, "reproduced", synth.InapplicableProvider, reason}, got); diff != "" {
		t.Errorf("replay --json (-want +got):\n%s", diff)
	}

	junit := filepath.Join(dir, "junit.xml")
	if code, out := replayWith(t, replayOptions{JUnit: junit}, spec, na); code != exitOK {
		t.Fatalf("replay --junit exit %d\n%s", code, out)
	}
	s, _ := readJUnit(t, junit)
	if s.Skipped != 1 || s.Failures != 0 || len(s.Cases) != 1 || s.Cases[0].Skipped == nil || s.Cases[0].Skipped.Message != to+reason {
		t.Errorf("JUnit: skipped %d failures %d, cases %+v; want one skipped case with the reason", s.Skipped, s.Failures, s.Cases)
	}

	// report: the timeline as the verb loads it, judged by spec.
	tl, err := triage.Load(context.Background(), na, &triage.Options{Delivery: &spec})
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	if err := triage.WriteReport(&html, tl, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<strong class="not-applicable">not-applicable</strong>`, `id="not-applicable"`, to} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	res, err := triage.Diff(context.Background(), na, golden+"/native.zst", &triage.DiffOptions{Delivery: &spec})
	if err != nil {
		t.Fatal(err)
	}
	var diffOut bytes.Buffer
	if err := res.WriteText(&diffOut); err != nil {
		t.Fatal(err)
	}
	if res.Same || !strings.Contains(diffOut.String(), "not-applicable scenario native  not applicable to "+string(synth.InapplicableProvider)) {
		t.Errorf("diff same %v, want A's verdict not applicable:\n%s", res.Same, diffOut.String())
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
// CLI is judged like any run: the background command Codex ran is
// delivered by the fixture server as a typed notification in a
// continuation run, the scripted model answers ACK:<secret> from T3's
// message for it, and the run passes (exit 0; the built binary, whose
// fixture verb is the server); replay reproduces the verdict from the file
// byte for byte.
func TestVerifyNativeOnCodex(t *testing.T) {
	cli := testkit.CodexCLI(t, "../..")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runBin(t, "verify", "--provider", "codex", "--provider-cli", cli, "--scenario", "native", "--out", out)
	if code != exitOK {
		t.Fatalf("verify exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	path := filepath.Join(out, "native-1.zst")
	if !strings.Contains(stdout, "PASS native ") || strings.Contains(stdout, "N/A") {
		t.Errorf("verify's console does not read as a pass:\n%s", stdout)
	}
	r, err := bundle.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := assert.ManifestProvider(r.Header().Manifest); got != assert.ProviderCodex {
		t.Errorf("the manifest's provider driver is %q, want codex", got)
	}
	var recorded []byte
	for ev, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == bundle.KindVerdict {
			recorded = append([]byte(nil), ev.Body.Data...)
		}
	}
	res, err := replay.ReplayFile(context.Background(), path, delivery.Options(nil))
	if err != nil {
		t.Fatal(err)
	}
	replayed, _ := json.Marshal(res.Verdict)
	if res.Verdict.Status != assert.StatusPassed || !res.Reproduced || !bytes.Equal(replayed, recorded) {
		t.Errorf("replay %s (reproduced %v):\n%s\nwant the recorded verdict\n%s", res.Verdict.Status, res.Reproduced, replayed, recorded)
	}
}
