package main

import (
	"fmt"
	"io"

	"github.com/wireproof/wireproof/assert"
)

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
