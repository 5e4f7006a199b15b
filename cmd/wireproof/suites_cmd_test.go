package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/replay/synth"
)

// suitesBundle writes an idle run failing single-notification and, by a
// stray Exit, protocol-conformance too.
func suitesBundle(t *testing.T) (string, synth.Script) {
	t.Helper()
	s := synth.WithStrayExit(synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle, Fault: "double-notification"}))
	path := filepath.Join(t.TempDir(), "both.zst")
	if err := synth.WriteRecorded(path, s); err != nil {
		t.Fatal(err)
	}
	return path, s
}

// TestReplayShowsEverySuite: replay's console line names every suite's
// status and failing check, the failure of each is printed, and JUnit
// carries both.
func TestReplayShowsEverySuite(t *testing.T) {
	path, s := suitesBundle(t)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	out, err := replayOut(t, replayOptions{JUnit: junit}, path)
	if code := exitCode(err, false); code != exitCheckFailed {
		t.Fatalf("exit %d, want %d\n%s", code, exitCheckFailed, out)
	}
	stray := s.At[synth.LabelStrayExit]
	for _, want := range []string{
		"[background-delivery failed single-notification @" + itoa(s.At[synth.LabelFinal]) + "; protocol-conformance failed answers-request @" + itoa(stray) + "]",
		"      background-delivery: single-notification @seq ",
		"      protocol-conformance: answers-request @seq " + itoa(stray) + ": A response answers no request in flight",
		"--around " + itoa(stray),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("replay's output lacks %q:\n%s", want, out)
		}
	}
	raw, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var js junitSuite
	if err := xml.Unmarshal(raw, &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Cases) != 1 || js.Cases[0].Failure == nil {
		t.Fatalf("JUnit cases %+v", js.Cases)
	}
	text := js.Cases[0].Failure.Text
	for _, want := range []string{"suites: background-delivery failed single-notification", "suite: protocol-conformance\ncheck: answers-request", "seq: " + itoa(stray)} {
		if !strings.Contains(text, want) {
			t.Errorf("the JUnit failure lacks %q:\n%s", want, text)
		}
	}
}

// TestVerifyShowsEverySuite: verify's lines for a run name every suite,
// and print each failed suite's failure.
func TestVerifyShowsEverySuite(t *testing.T) {
	f1 := &assert.Failure{Check: assert.CheckSingleNotification, Message: "One completion produced multiple notifications", Seq: 44, Expected: "1", Seen: "2"}
	f2 := &assert.Failure{Check: assert.CheckIDNotReused, Message: "A request id was reused while in flight", Seq: 50, Seen: "id 1 reused"}
	v := assert.Verdict{Status: assert.StatusFailed, Scenario: assert.ScenarioIdle, Failure: f1, Suites: []assert.SuiteResult{
		{Suite: assert.SuiteBackgroundDelivery, Status: assert.StatusFailed, Failure: f1},
		{Suite: assert.SuiteConformance, Status: assert.StatusFailed, Failure: f2}}}
	var b bytes.Buffer
	writeRunResult(&b, assert.ScenarioIdle, 159, "run.zst", v)
	want := `FAIL idle  159 events  run.zst
  suites: background-delivery failed single-notification @44; protocol-conformance failed id-not-reused @50
  background-delivery: single-notification @seq 44: One completion produced multiple notifications
    expected: 1
    seen:     2
    look:     wireproof inspect run.zst --around 44
  protocol-conformance: id-not-reused @seq 50: A request id was reused while in flight
    expected: 
    seen:     id 1 reused
    look:     wireproof inspect run.zst --around 50
`
	if b.String() != want {
		t.Errorf("verify's lines:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	v = assert.Verdict{Status: assert.StatusPassed, Suites: []assert.SuiteResult{{Suite: assert.SuiteBackgroundDelivery, Status: assert.StatusPassed}, {Suite: assert.SuiteConformance, Status: assert.StatusPassed}}}
	writeRunResult(&b, assert.ScenarioIdle, 10, "run.zst", v)
	if want := "PASS idle  10 events  run.zst\n  suites: background-delivery passed; protocol-conformance passed\n"; b.String() != want {
		t.Errorf("verify's lines for a pass:\n%s\nwant:\n%s", b.String(), want)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// TestDiffComparesEverySuite: diff of a run failing a background-delivery
// check against one failing the same check and conformance too exits 1.
func TestDiffComparesEverySuite(t *testing.T) {
	both, _ := suitesBundle(t)
	bg := filepath.Join(t.TempDir(), "bg.zst")
	if err := synth.WriteRecorded(bg, synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle, Fault: "double-notification"})); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "diff", bg, both)
	if code != exitCheckFailed || strings.Contains(stdout, "same story") {
		t.Errorf("diff exit %d, want %d and no 'same story':\n%s%s", code, exitCheckFailed, stdout, stderr)
	}
	if code, stdout, _ := runCLI(t, "diff", both, both); code != exitOK {
		t.Errorf("diff of a bundle with itself exit %d:\n%s", code, stdout)
	}
}
