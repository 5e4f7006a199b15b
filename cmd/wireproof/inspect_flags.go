package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
)

// inspectFlags prints what went wrong in a bundle, one flag a line in seq
// order (the classification the report and the viewer show: docs/filter.md),
// and the first bad state of a failing run beside its deciding event.
func inspectFlags(ctx context.Context, path string, out io.Writer) error {
	tl, err := loadTimeline(ctx, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d flag(s)\n", len(tl.Flags))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, f := range tl.Flags {
		fmt.Fprintf(tw, "@%d\t%s\t%s\t%s\t%s\n", f.Seq, formatOffset(f.T), f.Kind, cell(f.Conn), f.What)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if fb := tl.FirstBad; fb != nil {
		fmt.Fprintf(out, "first bad state: @%d (%s), from where %s already saw the value it failed with at @%d\n", fb.Seq, fb.Source, fb.Check, fb.Decided)
		fmt.Fprintf(out, "look: wireproof inspect %s --seq %d-%d\n", quoteArgs([]string{path}), fb.Seq, fb.Decided)
	}
	return nil
}
