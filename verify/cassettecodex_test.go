package verify_test

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/verify"
)

// TestModelCassetteCodex is TestModelCassette for the real Codex CLI and
// the Responses API: idle recorded against a loopback TLS "real model"
// (the scripted model behind an httptest TLS server, trusted through
// --model-ca, the CLI's key the caller's OPENAI_API_KEY, which reaches the
// model as its bearer token and no file), then run again from that bundle
// as the model's cassette: a new secret, new ports, new Codex session,
// thread, item and call ids, and the run passes with the same verdict,
// every recorded Responses call played once, nothing missed, and replays
// to the same verdict (runOnce). With the gate failing (--fail-gate: the
// child's command output is no longer the recorded one) the run misses,
// the miss names the closest recorded call and the first differing input
// field, and the check model-cassette-miss fails.
func TestModelCassetteCodex(t *testing.T) {
	cli := testkit.CodexCLI(t, "..")
	key := "sk-proj-wireproof-upstream-" + rand.Text()
	t.Setenv("OPENAI_API_KEY", key)
	upstream, ca, calls, keyed := tlsModel(t, model.ResponsesPath, func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+key })
	rec := runOnce(t, verify.Options{Scenario: assert.ScenarioIdle, ProviderCLI: cli, Timeout: cliTimeout, ModelUpstream: upstream, ModelCA: ca})
	if f := rec.Verdict.Failure; f != nil {
		t.Fatalf("recording failed: %s (%s)", f.Check, f.Message)
	}
	_, recEvents := readBundle(t, rec.Bundle)
	recorded := responsesCalls(recEvents)
	if n := calls.Load(); n < 2 || keyed.Load() != n || int(n) != recorded {
		t.Errorf("the TLS upstream got %d Responses calls, %d with the caller's key; the bundle holds %d", n, keyed.Load(), recorded)
	}
	if hdr, _ := readBundle(t, rec.Bundle); hdr.Manifest.Options["modelUpstream"] != upstream {
		t.Errorf("manifest modelUpstream %q", hdr.Manifest.Options["modelUpstream"])
	}
	if raw := testkit.Decompress(t, rec.Bundle); bytes.Contains(raw, []byte(key)) {
		t.Error("the caller's API key is in the bundle")
	}

	play := runOnce(t, verify.Options{Scenario: assert.ScenarioIdle, ProviderCLI: cli, Timeout: cliTimeout,
		ModelCassette: []string{rec.Bundle}, ModelFast: true})
	// The played answers carry this run's secret (the child's answer and
	// the parent's ACK, from the live command output and task_status
	// result), not the recorded run's.
	checkPlayed(t, rec, play, recorded)
	if _, playEvents := readBundle(t, play.Bundle); responsesCalls(playEvents) != recorded {
		t.Errorf("the run from the cassette made %d Responses calls, %d recorded", responsesCalls(playEvents), recorded)
	}

	miss := runOnce(t, verify.Options{Scenario: assert.ScenarioIdle, ProviderCLI: cli, Timeout: cliTimeout,
		ModelCassette: []string{rec.Bundle}, ModelFast: true, FailGate: true})
	m := miss.ModelCassette
	if m == nil || m.Missed == 0 || len(m.Misses) == 0 {
		t.Fatalf("the failing gate's run missed nothing: %+v", m)
	}
	first := m.Misses[0]
	if !strings.HasPrefix(first.Request, "POST /v1/responses (") || !strings.HasPrefix(first.Path, "input[") || first.Closest == "" {
		t.Errorf("the miss is not explained: %+v", first)
	}
	failed := false
	for _, s := range miss.Verdict.Suites {
		if s.Suite == assert.SuiteConformance && s.Failure != nil && s.Failure.Check == assert.CheckModelCassetteMiss {
			failed = strings.Contains(s.Failure.Seen, "closest recorded: ") && strings.Contains(s.Failure.Seen, "first difference: input[")
		}
	}
	if !failed {
		t.Errorf("the verdict's conformance suite does not fail %s with the miss explained: %+v", assert.CheckModelCassetteMiss, miss.Verdict.Suites)
	}
}

// TestModelCassetteCodexAllScenarios is TestModelCassetteAllScenarios with
// the real Codex CLI: --scenario all recorded once against the scripted
// Responses API, then each scenario run again from that directory with
// --strict, passing with its recorded verdict, playing its own calls once
// with nothing missed, reproduced by replay.
func TestModelCassetteCodexAllScenarios(t *testing.T) {
	cassetteAllScenarios(t, testkit.CodexCLI(t, ".."), responsesCalls)
}
