package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/internal/objstore"
	"github.com/wireproof/wireproof/triage"
)

// reportOptions are the flags of `wireproof report`.
type reportOptions struct {
	Out   string // the HTML file; "" means BUNDLE with .zst replaced by .html
	Force bool   // write it even over a bundle

	stdout, stderr io.Writer
}

// newReportCommand builds `wireproof report`.
func newReportCommand(g *globalOptions) *cobra.Command {
	var opts reportOptions
	cmd := &cobra.Command{
		Use:   "report [-o report.html] BUNDLE|s3://BUCKET/KEY",
		Short: "Write a self-contained HTML report of a bundle",
		Long: `report writes one HTML file (no external scripts, styles or fonts) that shows
the verdict first (the failing check, expected and seen, the diff, the seq and
time, whether the replay reproduced it), the manifest, a swimlane timeline by
channel with the failing event highlighted and anchored (#seq-N), the RPC calls,
the HTTP exchanges, the last projection of the parent thread and the server log.

The default output is BUNDLE with .zst replaced by .html; its path is printed
(not that of a pipe or device written into: -o /dev/stdout prints the report
alone).
A truncated bundle is reported up to its cut, with a notice; exit 0. A file that
is missing, not a bundle, or broken before its end exits 3; one whose stored
bytes are not what its writer wrote is damaged and exits 7.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runReport(cmd.Context(), opts, args)
		},
	}
	outFlag(cmd.Flags(), &opts.Out, "write the report to `FILE` (default: BUNDLE with .html for .zst)")
	forceFlag(cmd.Flags(), &opts.Force)
	return cmd
}

func runReport(ctx context.Context, opts reportOptions, args []string) (err error) {
	if opts.stdout == nil {
		opts.stdout, opts.stderr = os.Stdout, os.Stderr
	}
	if len(args) != 1 {
		return usageError{errors.New("report takes exactly one BUNDLE")}
	}
	out := opts.Out
	if out == "" {
		out = strings.TrimSuffix(args[0], ".zst") + ".html"
		if objstore.IsRemote(args[0]) { // beside the bundle is in the bucket: here instead
			out = path.Base(out)
		}
	}
	if err := notDirectories("report", args); err != nil {
		return err
	}
	if err := refuseBundle(out, opts.Force, args); err != nil {
		return err
	}
	args, f, err := fetchBundles(ctx, args)
	if err != nil {
		return err
	}
	defer f.done(&err)
	opts.stderr = f.writer(opts.stderr)
	tl, err := loadTimeline(ctx, args[0])
	if err != nil {
		return err
	}
	if err := writeFileAtomic(out, func(w io.Writer) error { return triage.WriteReport(w, tl, nil) }); err != nil {
		return err
	}
	noteTruncated(opts.stderr, tl)
	printOutput(opts.stdout, out)
	return nil
}
