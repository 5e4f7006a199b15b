package triage

import (
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/assert"
)

// Suites returns how every suite that ran on the bundle ended, in the
// verdict's order (background-delivery on verification runs, then
// protocol-conformance). A verdict recorded before suites were named (no
// Suites) gets one row, "verdict", from its own status and failure, so
// nothing a verdict says is left out of what shows it.
func Suites(v assert.Verdict) []assert.SuiteResult {
	if len(v.Suites) > 0 {
		return v.Suites
	}
	if v.Status == "" {
		return nil
	}
	return []assert.SuiteResult{{Suite: "verdict", Status: v.Status, Failure: v.Failure}}
}

// NotApplicableText says why a verdict's scenario did not apply, in the
// words every tool that shows a verdict uses: "not applicable to codex:
// <reason>". Empty when it applied.
func NotApplicableText(v assert.Verdict) string {
	if v.Reason == "" {
		return ""
	}
	return fmt.Sprintf("not applicable to %s: %s", v.Provider, v.Reason)
}

// SuiteText is one suite's status and, when it failed, its failing check
// and where: "protocol-conformance failed id-not-reused @12".
func SuiteText(s assert.SuiteResult) string {
	text := s.Suite + " " + string(s.Status)
	if f := s.Failure; f != nil {
		text += fmt.Sprintf(" %s @%d", f.Check, f.Seq)
	}
	return text
}

// SuitesLine names every suite's status and failing check on one line, for
// the consoles of verify and replay: "background-delivery passed;
// protocol-conformance failed id-not-reused @12". Empty when no suite ran.
func SuitesLine(v assert.Verdict) string {
	var parts []string
	for _, s := range Suites(v) {
		parts = append(parts, SuiteText(s))
	}
	return strings.Join(parts, "; ")
}

// FailedSuites are the suites that failed, in order, each with its failure.
func FailedSuites(v assert.Verdict) []assert.SuiteResult {
	var out []assert.SuiteResult
	for _, s := range Suites(v) {
		if s.Failure != nil {
			out = append(out, s)
		}
	}
	return out
}

// SuiteDiff is one suite's status and failing check on each side of a
// diff: the suite ran on one side only when the other's is empty.
type SuiteDiff struct {
	Suite  string        `json:"suite"`
	A      assert.Status `json:"a,omitempty"`
	B      assert.Status `json:"b,omitempty"`
	ACheck string        `json:"aCheck,omitempty"`
	BCheck string        `json:"bCheck,omitempty"`
}

// Same reports whether the suite ended the same way on both sides: the
// same status and the same failing check.
func (d SuiteDiff) Same() bool { return d.A == d.B && d.ACheck == d.BCheck }

// suiteDiffs lines up the suites of two verdicts by id: a's order, then
// the suites only b ran.
func suiteDiffs(a, b assert.Verdict) []SuiteDiff {
	var out []SuiteDiff
	at := map[string]int{}
	for _, s := range Suites(a) {
		at[s.Suite] = len(out)
		out = append(out, SuiteDiff{Suite: s.Suite, A: s.Status, ACheck: failingCheck(s.Failure)})
	}
	for _, s := range Suites(b) {
		i, ok := at[s.Suite]
		if !ok {
			i = len(out)
			out = append(out, SuiteDiff{Suite: s.Suite})
		}
		out[i].B, out[i].BCheck = s.Status, failingCheck(s.Failure)
	}
	return out
}

func failingCheck(f *assert.Failure) string {
	if f == nil {
		return ""
	}
	return f.Check
}
