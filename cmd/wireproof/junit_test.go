package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/replay"
)

const junitXSD = "testdata/junit/junit.xsd"

// xmllintSchema validates file against the JUnit XSD with xmllint; a missing
// xmllint skips the test, or fails it under WIREPROOF_TEST_XMLLINT_REQUIRED
// (.ci/run installs libxml2-utils and sets it).
func xmllintSchema(t *testing.T, file string) {
	t.Helper()
	if _, err := exec.LookPath("xmllint"); err != nil {
		testkit.Missing(t, testkit.EnvXMLLintRequired, "xmllint is not installed (Debian: apt-get install libxml2-utils): the JUnit schema check needs it")
	}
	out, err := exec.CommandContext(context.Background(), "xmllint", "--noout", "--schema", junitXSD, file).CombinedOutput()
	if err != nil {
		t.Fatalf("%s does not validate against %s: %v\n%s", file, junitXSD, err, out)
	}
	if !strings.Contains(string(out), "validates") {
		t.Fatalf("xmllint did not say %s validates:\n%s", file, out)
	}
}

// readJUnit validates a JUnit file against the XSD and decodes it.
func readJUnit(t *testing.T, path string) (junitSuite, []byte) {
	t.Helper()
	xmllintSchema(t, path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s junitSuite
	if err := xml.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s, raw
}

// TestReplayJUnitSchema: replay --junit over a passing, a failing, a plain
// recording and a file that is no bundle writes JUnit that validates against Jenkins' JUnit
// XSD and carries what CI tools show: the suite's time, timestamp and
// hostname, each case's time, a failure's check (type) and message, and
// the `look:` command in the failed case's system-out.
func TestReplayJUnitSchema(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.zst")
	writePlainRecording(t, plain)
	notBundle := filepath.Join(dir, "not-a-bundle.zst")
	if err := os.WriteFile(notBundle, []byte("not a bundle"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "report.xml")
	before := time.Now().UTC().Truncate(time.Second)
	_, err := replayOut(t, replayOptions{JUnit: path}, golden+"/idle.zst", golden+"/active-extra-run.zst", plain, notBundle)
	if err == nil {
		t.Fatal("want a failure")
	}
	s, _ := readJUnit(t, path)
	host, _ := os.Hostname()
	ts, err := time.Parse("2006-01-02T15:04:05", s.Timestamp)
	if err != nil || ts.Before(before) || ts.After(time.Now().UTC()) {
		t.Errorf("timestamp %q (%v): not this run's start", s.Timestamp, err)
	}
	seconds := regexp.MustCompile(`^[0-9]+\.[0-9]{3}$`)
	if !seconds.MatchString(s.Time) || s.Hostname != host || s.Hostname == "" {
		t.Errorf("suite time %q hostname %q, want seconds and %q", s.Time, s.Hostname, host)
	}
	type row struct{ Name, Classname, Result, Type, Message string }
	var got []row
	for _, c := range s.Cases {
		if !seconds.MatchString(c.Time) {
			t.Errorf("%s: time %q", c.Name, c.Time)
		}
		r := row{Name: filepath.Base(c.Name), Classname: c.Classname, Result: "passed"}
		switch {
		case c.Failure != nil:
			r.Result, r.Type, r.Message = "failure", c.Failure.Type, c.Failure.Message
		case c.Error != nil:
			r.Result, r.Type, r.Message = "error", c.Error.Type, c.Error.Message
		case c.Skipped != nil:
			r.Result, r.Message = "skipped", c.Skipped.Message
		}
		got = append(got, r)
	}
	want := []row{
		{"idle.zst", "wireproof.replay.idle", "passed", "", ""},
		{"active-extra-run.zst", "wireproof.replay.active", "failure", "active-single-run", "Active delivery unexpectedly started another run"},
		{"plain.zst", "wireproof.replay", "passed", "", ""}, // judged by the protocol-conformance suite
		{"not-a-bundle.zst", "wireproof.replay", "error", "unreadable", "unreadable bundle"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if s.Tests != 4 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 0 {
		t.Errorf("tests=%d failures=%d errors=%d skipped=%d, want 4 1 1 0", s.Tests, s.Failures, s.Errors, s.Skipped)
	}
	look := "look: wireproof inspect " + golden + "/active-extra-run.zst --around 42\n"
	if out := s.Cases[1].SystemOut; !strings.Contains(out, look) || !strings.Contains(out, "suites: ") {
		t.Errorf("the failed case's system-out lacks %q and the suites:\n%s", look, out)
	}
	if f := s.Cases[1].Failure; f == nil || !strings.Contains(f.Text, "check: active-single-run\nmessage: Active delivery unexpectedly started another run\nseq: 42\n") {
		t.Errorf("the failure text lacks the check, message and seq: %+v", f)
	}
	if !strings.Contains(s.Cases[0].SystemOut, "suites: ") {
		t.Errorf("the passed case's system-out lacks its suites: %q", s.Cases[0].SystemOut)
	}
}

// TestJUnitEverySuitesFailure: a bundle on which two suites failed is one
// failure, typed and worded by the deciding check, whose text has both
// suites' failures and whose system-out a look: command for each; it
// validates against the XSD.
func TestJUnitEverySuitesFailure(t *testing.T) {
	delivery := &assert.Failure{Check: "single-notification", Seq: 146, Message: "two notifications"}
	conform := &assert.Failure{Check: "jsonrpc-id-unique", Seq: 107, Message: "id 3 reused"}
	v := assert.Verdict{Status: assert.StatusFailed, Scenario: "idle", Failure: delivery, Suites: []assert.SuiteResult{
		{Suite: "background-delivery", Status: assert.StatusFailed, Failure: delivery},
		{Suite: "protocol-conformance", Status: assert.StatusFailed, Failure: conform},
	}}
	res := &replay.Result{Scenario: "idle", Verdict: v, Recorded: &v, Reproduced: true}
	path := filepath.Join(t.TempDir(), "two.xml")
	run := junitRun{Started: time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC), Elapsed: 1500 * time.Millisecond}
	if err := writeJUnit(path, []replayOutcome{{ref: bundleRef{Path: "runs/idle-1.zst"}, res: res, dur: 250 * time.Millisecond}}, run); err != nil {
		t.Fatal(err)
	}
	s, raw := readJUnit(t, path)
	if s.Time != "1.500" || s.Timestamp != "2026-12-01T13:00:00" || s.Cases[0].Time != "0.250" {
		t.Errorf("times: suite %q at %q, case %q", s.Time, s.Timestamp, s.Cases[0].Time)
	}
	f := s.Cases[0].Failure
	if f == nil || f.Type != "single-notification" || f.Message != "two notifications" {
		t.Fatalf("failure %+v, want the deciding check's", f)
	}
	for _, want := range []string{"suite: background-delivery\ncheck: single-notification", "suite: protocol-conformance\ncheck: jsonrpc-id-unique\nmessage: id 3 reused\nseq: 107"} {
		if !strings.Contains(f.Text, want) {
			t.Errorf("failure text lacks %q:\n%s", want, f.Text)
		}
	}
	wantOut := "suites: background-delivery failed single-notification @146; protocol-conformance failed jsonrpc-id-unique @107\n" +
		"background-delivery: single-notification @seq 146: two notifications\nlook: wireproof inspect runs/idle-1.zst --around 146\n" +
		"protocol-conformance: jsonrpc-id-unique @seq 107: id 3 reused\nlook: wireproof inspect runs/idle-1.zst --around 107\n"
	if diff := cmp.Diff(wantOut, s.Cases[0].SystemOut); diff != "" {
		t.Errorf("system-out (-want +got):\n%s", diff)
	}
	if bytes.Count(raw, []byte("<failure ")) != 1 {
		t.Errorf("want one failure element:\n%s", raw)
	}
}

// writePlainRecording writes a recording with no verification run in it: one
// HTTP exchange that follows its protocol.
func writePlainRecording(t *testing.T, path string) {
	t.Helper()
	w, err := bundle.Create(path, bundle.Header{Format: bundle.FormatVersion, Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []bundle.Event{
		{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/"},
		{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
		{Kind: bundle.KindHTTPEnd, Conn: "h1"},
	} {
		if _, err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
