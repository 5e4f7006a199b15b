package verify_test

import (
	"bytes"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/verify"
)

// resultRE finds the gate's secrets (RESULT_<uuid>) in a decompressed bundle.
var resultRE = regexp.MustCompile(`RESULT_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func secretsIn(t *testing.T, bundle string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, s := range resultRE.FindAllString(string(testkit.Decompress(t, bundle)), -1) {
		out[s] = true
	}
	return out
}

// TestModelCassette records idle with the real Claude CLI against a
// loopback TLS "real model" (the scripted model behind an httptest TLS
// server, its certificate trusted through --model-ca, the CLI's key the
// caller's ANTHROPIC_API_KEY, which reaches the model and no file), then
// runs it again from that bundle as the model's cassette: a new
// secret, new ports, new task, thread and session ids, and the run passes
// with the same verdict, every recorded model call played once and nothing
// missed, and replays to the same verdict (runOnce). With the gate failing
// (--fail-gate: the child's tool result is no longer the recorded one) the
// wireproof binary, run as a child process with --strict, explains the
// miss (the nearest recorded call, the first differing field), fails the
// check model-cassette-miss, and exits 4.
func TestModelCassette(t *testing.T) {
	cli := claudeCLI(t)
	key := "sk-ant-api03-wireproof-upstream-" + rand.Text()
	t.Setenv("ANTHROPIC_API_KEY", key)
	upstream, ca, calls, keyed := tlsModel(t, "", func(r *http.Request) bool { return r.Header.Get("x-api-key") == key })
	rec := runOnce(t, verify.Options{Scenario: assert.ScenarioIdle, ProviderCLI: cli, Timeout: cliTimeout, ModelUpstream: upstream, ModelCA: ca})
	if f := rec.Verdict.Failure; f != nil {
		t.Fatalf("recording failed: %s (%s)", f.Check, f.Message)
	}
	if n := calls.Load(); n < 2 || keyed.Load() != n {
		t.Errorf("the TLS upstream got %d model calls, %d with the caller's key", n, keyed.Load())
	}
	if hdr, _ := readBundle(t, rec.Bundle); hdr.Manifest.Options["modelUpstream"] != upstream {
		t.Errorf("manifest modelUpstream %q", hdr.Manifest.Options["modelUpstream"])
	}
	if raw := testkit.Decompress(t, rec.Bundle); bytes.Contains(raw, []byte(key)) {
		t.Error("the caller's API key is in the bundle")
	}
	_, recEvents := readBundle(t, rec.Bundle)
	recorded := bundleSides(t, recEvents).model

	play := runOnce(t, verify.Options{Scenario: assert.ScenarioIdle, ProviderCLI: cli, Timeout: cliTimeout,
		ModelCassette: []string{rec.Bundle}, ModelFast: true})
	// The replayed answers carry this run's secret (the ACK, from the live
	// task_status result), not the recorded run's.
	checkPlayed(t, rec, play, recorded)

	out := filepath.Join(t.TempDir(), "miss")
	cmd := exec.Command(wireproofBin, "verify", "--scenario", "idle", "--provider-cli", cli, "--timeout", "180",
		"--model-cassette", rec.Bundle, "--fail-gate", "--strict", "--out", out) // at the recorded pace
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	stdout, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("verify --strict with a miss: %v, want exit 4\n%s", err, stdout)
	}
	if !strings.Contains(string(stdout), "miss: wireproof cassette: no recorded model call matches POST /v1/messages") ||
		!strings.Contains(string(stdout), "first difference: messages[") {
		t.Errorf("the miss is not explained:\n%s", stdout)
	}
	v := readVerdict(t, filepath.Join(out, "idle-1.verdict.json"))
	missed := false
	for _, s := range v.Suites {
		if s.Suite == assert.SuiteConformance && s.Failure != nil && s.Failure.Check == assert.CheckModelCassetteMiss {
			missed = strings.Contains(s.Failure.Seen, "closest recorded: ") && strings.Contains(s.Failure.Seen, "first difference: ")
		}
	}
	if !missed {
		t.Errorf("the verdict's conformance suite does not fail %s with the miss explained: %+v", assert.CheckModelCassetteMiss, v.Suites)
	}
	// The miss is in the bundle: replay judges it the same.
	if o, err := exec.Command(wireproofBin, "replay", filepath.Join(out, "idle-1.zst")).CombinedOutput(); !strings.Contains(string(o), "reproduced") {
		t.Errorf("replay of the miss run: %v\n%s", err, o)
	}
}

// tlsModel serves the scripted model on a loopback TLS server, as a real
// model API: its URL, its certificate in a PEM file (for --model-ca), and
// counters of the model calls it got (requests at path, any path for "")
// and of those keyed reports true for.
func tlsModel(t *testing.T, path string, keyed func(*http.Request) bool) (string, string, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	h, err := model.NewHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls, withKey atomic.Int32
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if path == "" || r.URL.Path == path {
			calls.Add(1)
			if keyed(r) {
				withKey.Add(1)
			}
		}
		h.ServeHTTP(w, r)
	}))
	upstream.StartTLS()
	t.Cleanup(upstream.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return upstream.URL, ca, &calls, &withKey
}

// checkPlayed wants the run from rec's bundle as the model's cassette
// (play) to pass with rec's verdict, to play each of the recorded calls
// once and miss none, to name the cassette in its manifest, and to carry
// its own secret, not the recorded one.
func checkPlayed(t *testing.T, rec, play *verify.Result, recorded int) {
	t.Helper()
	if f := play.Verdict.Failure; f != nil {
		t.Fatalf("the run from the cassette failed: %s (%s): %s\n%+v", f.Check, f.Message, f.Seen, play.ModelCassette)
	}
	if got, want := triageSuites(play.Verdict), triageSuites(rec.Verdict); got != want {
		t.Errorf("suites %s from the cassette, %s recorded", got, want)
	}
	c := play.ModelCassette
	if c == nil || c.Played != recorded || c.Repeated != 0 || c.Missed != 0 || len(c.Unplayed) != 0 {
		t.Fatalf("cassette report %+v, want all %d recorded calls played once", c, recorded)
	}
	hdr, _ := readBundle(t, play.Bundle)
	if hdr.Manifest.Options["modelCassette"] != rec.Bundle {
		t.Errorf("manifest modelCassette %q", hdr.Manifest.Options["modelCassette"])
	}
	recSecrets, playSecrets := secretsIn(t, rec.Bundle), secretsIn(t, play.Bundle)
	if len(recSecrets) != 1 || len(playSecrets) != 1 {
		t.Fatalf("secrets recorded %v, played %v: want one each", recSecrets, playSecrets)
	}
	for s := range recSecrets {
		if playSecrets[s] {
			t.Errorf("the run from the cassette carries the recorded secret %s", s)
		}
	}
}

// triageSuites is each suite's status and failing check, in one line.
func triageSuites(v assert.Verdict) string {
	var b strings.Builder
	for _, s := range v.Suites {
		b.WriteString(string(s.Suite) + "=" + string(s.Status))
		if s.Failure != nil {
			b.WriteString(":" + s.Failure.Check)
		}
		b.WriteString(" ")
	}
	return b.String()
}

// TestModelCassetteAllScenarios records --scenario all once with the real
// CLI and the scripted model (the wireproof binary's suite path: one child
// per scenario), then runs every scenario again as its own child process
// from that one directory as the model's cassette, with --strict: a new
// secret, new ports and ids, and each scenario passes with the verdict it
// was recorded with, exits 0 (a miss would exit 4), plays its recorded
// calls once with nothing missed or repeated, and replay reproduces it.
// Together the four runs play every call of the directory.
func TestModelCassetteAllScenarios(t *testing.T) {
	cli := claudeCLI(t)
	cassetteAllScenarios(t, cli, func(events []bundle.Event) int { return bundleSides(t, events).model })
}

// cassetteAllScenarios is TestModelCassetteAllScenarios with the real CLI
// cli, whose model calls in a bundle's events modelCalls counts.
func cassetteAllScenarios(t *testing.T, cli string, modelCalls func([]bundle.Event) int) {
	t.Helper()
	recDir := filepath.Join(t.TempDir(), "tape")
	rec := exec.Command(wireproofBin, "verify", "--scenario", "all", "--provider-cli", cli, "--timeout", "180", "--out", recDir)
	rec.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	if out, err := rec.CombinedOutput(); err != nil {
		t.Fatalf("recording --scenario all: %v\n%s", err, out)
	}
	recorded := readResults(t, recDir)
	if len(recorded) != len(verify.Scenarios) {
		t.Fatalf("recorded %d runs, want one per scenario (%d): %+v", len(recorded), len(verify.Scenarios), recorded)
	}
	summaryRE := regexp.MustCompile(`cassette: played (\d+), repeated (\d+), missed (\d+), never played \d+`)
	total, played := 0, 0
	for _, e := range recorded {
		if e.Status != assert.StatusPassed {
			t.Fatalf("recording %s: %s (%s)", e.Scenario, e.Status, e.Check)
		}
		_, events := readBundle(t, e.Bundle)
		calls := modelCalls(events)
		if calls == 0 {
			t.Fatalf("recording %s holds no model call", e.Scenario)
		}
		total += calls

		out := filepath.Join(t.TempDir(), "play")
		cmd := exec.Command(wireproofBin, "verify", "--scenario", string(e.Scenario), "--provider-cli", cli, "--timeout", "180",
			"--model-cassette", recDir, "--model-fast", "--strict", "--out", out)
		cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
		stdout, err := cmd.Output()
		if err != nil {
			t.Errorf("%s from the cassette: %v, want exit 0\n%s", e.Scenario, err, stdout)
			continue
		}
		m := summaryRE.FindStringSubmatch(string(stdout))
		if m == nil {
			t.Errorf("%s from the cassette: no cassette summary\n%s", e.Scenario, stdout)
			continue
		}
		if m[1] != fmt.Sprint(calls) || m[2] != "0" || m[3] != "0" {
			t.Errorf("%s from the cassette: %s, want its %d recorded calls played once, none missed", e.Scenario, m[0], calls)
		}
		played += calls
		bundlePath := filepath.Join(out, string(e.Scenario)+"-1.zst")
		v := readVerdict(t, filepath.Join(out, string(e.Scenario)+"-1.verdict.json"))
		if got, want := triageSuites(v), entrySuites(e); got != want {
			t.Errorf("%s: suites %s from the cassette, %s recorded", e.Scenario, got, want)
		}
		for s := range secretsIn(t, e.Bundle) {
			if secretsIn(t, bundlePath)[s] {
				t.Errorf("%s from the cassette carries the recorded secret %s", e.Scenario, s)
			}
		}
		if o, err := exec.Command(wireproofBin, "replay", bundlePath).CombinedOutput(); err != nil || !strings.Contains(string(o), "reproduced") {
			t.Errorf("replay of %s from the cassette: %v\n%s", e.Scenario, err, o)
		}
	}
	if played != total {
		t.Errorf("the four runs played %d of the directory's %d recorded calls", played, total)
	}
}

// entrySuites is triageSuites of a results.json entry.
func entrySuites(e verify.SuiteEntry) string {
	return triageSuites(assert.Verdict{Suites: e.Suites})
}
