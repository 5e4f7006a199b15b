package main

import (
	"fmt"
	"io"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/triage"
)

// writeSuiteFailures prints the failure of every suite that failed, in the
// verdict's order, each with its check, seq and message and then in detail
// (writeFailureDetail): a verdict's first failure does not hide another
// suite's.
func writeSuiteFailures(w io.Writer, bundlePath string, v assert.Verdict, prefix string) {
	for _, s := range triage.FailedSuites(v) {
		f := s.Failure
		fmt.Fprintf(w, "%s%s: %s @seq %d: %s\n", prefix, s.Suite, f.Check, f.Seq, f.Message)
		writeFailureDetail(w, bundlePath, f, prefix+"  ")
	}
}

// writeFailureDetail prints what a failed check expected and saw, its diff,
// and the command that shows the events around it. verify and replay print
// failures the same way.
func writeFailureDetail(w io.Writer, bundlePath string, f *assert.Failure, prefix string) {
	if f.Expected != "" || f.Seen != "" {
		fmt.Fprintf(w, "%sexpected: %s\n%sseen:     %s\n", prefix, f.Expected, prefix, f.Seen)
	}
	if f.Diff != "" {
		fmt.Fprintf(w, "%sdiff (-want +got):\n%s\n", prefix, indent(f.Diff, prefix+"  "))
	}
	fmt.Fprintf(w, "%slook:     wireproof inspect %s --around %d\n", prefix, bundlePath, f.Seq)
}
