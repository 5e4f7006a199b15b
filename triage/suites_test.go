package triage

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay/synth"
)

// synthRun writes a synthetic idle run with fault (the background-delivery
// suite's) and, if stray, an Exit answering no request (protocol-conformance
// fails answers-request), its verdict recorded as the live driver does.
func synthRun(t *testing.T, name, fault string, stray bool) string {
	t.Helper()
	s := synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle, Fault: fault})
	if stray {
		s = synth.WithStrayExit(s)
	}
	path := filepath.Join(t.TempDir(), name+".zst")
	if err := synth.WriteRecorded(path, s); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSuitesLine(t *testing.T) {
	f := &assert.Failure{Check: assert.CheckAnswersRequest, Seq: 12}
	for _, c := range []struct {
		v    assert.Verdict
		want string
	}{
		{assert.Verdict{Status: assert.StatusFailed, Failure: f, Suites: []assert.SuiteResult{
			{Suite: assert.SuiteBackgroundDelivery, Status: assert.StatusPassed},
			{Suite: assert.SuiteConformance, Status: assert.StatusFailed, Failure: f}}},
			"background-delivery passed; protocol-conformance failed answers-request @12"},
		// Recorded before suites were named: the verdict's own status.
		{assert.Verdict{Status: assert.StatusFailed, Failure: f}, "verdict failed answers-request @12"},
		{assert.Verdict{}, ""},
	} {
		if got := SuitesLine(c.v); got != c.want {
			t.Errorf("SuitesLine = %q, want %q", got, c.want)
		}
	}
}

// TestReportShowsEverySuite: the verdict box lists every suite with its
// status and failing check, both failures when both suites failed.
func TestReportShowsEverySuite(t *testing.T) {
	both := synthRun(t, "both", "double-notification", true)
	html := report(t, load(t, both, nil))
	box := html[strings.Index(html, `<h2 id="verdict">`):strings.Index(html, `<h2 id="manifest">`)]
	for _, want := range []string{
		`<td>background-delivery</td><td class="failed">failed</td><td>single-notification</td>`,
		`<td>protocol-conformance</td><td class="failed">failed</td><td>answers-request</td>`,
		"A response answers no request in flight",
	} {
		if !strings.Contains(box, want) {
			t.Errorf("the verdict box does not show %q:\n%s", want, box)
		}
	}
	conf := report(t, load(t, synthRun(t, "conf", "", true), nil))
	if !strings.Contains(conf, `<td>background-delivery</td><td class="passed">passed</td>`) || !strings.Contains(conf, `<td>protocol-conformance</td><td class="failed">failed</td><td>answers-request</td>`) {
		t.Errorf("the report of a run failing conformance only does not show both suites")
	}
}

// TestDiffComparesEverySuite: two runs failing the same background-delivery
// check, one of them conformance too, are not the same story; the text
// marks the suite.
func TestDiffComparesEverySuite(t *testing.T) {
	a := synthRun(t, "a", "double-notification", false)
	b := synthRun(t, "b", "double-notification", true)
	res, err := Diff(context.Background(), a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []SuiteDiff{
		{Suite: assert.SuiteBackgroundDelivery, A: assert.StatusFailed, B: assert.StatusFailed, ACheck: assert.CheckSingleNotification, BCheck: assert.CheckSingleNotification},
		{Suite: assert.SuiteConformance, A: assert.StatusPassed, B: assert.StatusFailed, BCheck: assert.CheckAnswersRequest},
	}
	if diff := cmp.Diff(want, res.Suites); diff != "" {
		t.Errorf("suites (-want +got):\n%s", diff)
	}
	if res.Same {
		t.Error("Same: a run failing conformance told the same story as one passing it")
	}
	var text bytes.Buffer
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if strings.Contains(out, "same story") || !strings.Contains(out, "the runs differ") {
		t.Errorf("the text does not say the runs differ:\n%s", out)
	}
	marked := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == assert.SuiteConformance {
			marked = strings.Join(f, " ") == "protocol-conformance passed failed answers-request *"
		}
	}
	if !marked {
		t.Errorf("the text does not mark the suite that differs:\n%s", out)
	}
	// The same bundle twice is the same story, suites and all.
	same, err := Diff(context.Background(), b, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !same.Same {
		t.Errorf("a bundle against itself differs: %+v", same.Suites)
	}
}

// TestCloseSummaryNoStraySpace: a close without a reason reads "1006: EOF".
func TestCloseSummaryNoStraySpace(t *testing.T) {
	for _, c := range []struct {
		ev   bundle.Event
		want string
	}{
		{bundle.Event{Kind: bundle.KindWSClose, Dir: bundle.DirServerToClient, Code: 1006, Err: "EOF"}, "close by s2c 1006: EOF"},
		{bundle.Event{Kind: bundle.KindWSClose, Dir: bundle.DirClientToServer, Code: 1000, Reason: "bye"}, "close by c2s 1000 bye"},
	} {
		if got := Summary(&c.ev); got != c.want {
			t.Errorf("Summary = %q, want %q", got, c.want)
		}
	}
}
