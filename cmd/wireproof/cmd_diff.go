package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/triage"
)

// diffOptions are the flags of `wireproof diff`.
type diffOptions struct {
	JSON    bool
	Context int // story steps of context around the divergence

	stdout io.Writer
}

// newDiffCommand builds `wireproof diff`.
func newDiffCommand(g *globalOptions) *cobra.Command {
	var opts diffOptions
	cmd := &cobra.Command{
		Use:   "diff [flags] A.zst B.zst",
		Short: "Show where one run parted from another",
		Long: `diff compares two recorded runs, typically a passing one (A) and a failing one
(B), so you can see where the failing run went another way:

  header     the manifest fields that differ (scenario, provider, model, fault and
             other options, revision, tool)
  verdict    each side's replayed verdict and a diff (-A +B), ids and seqs blanked
  story      the parent thread's states, step by step: ids, timestamps, ports and
             the secret's value taken out, consecutive equal states collapsed, the
             two sequences aligned. Stretches where one run saw a state the other
             passed through unseen and the stories then meet again are timing and
             only counted; the first stretch after which they never meet again is
             the divergence, shown with context from both sides, a diff (-A +B)
             of the two states and the seq to give to inspect --around.
  traffic    counts per event kind and per RPC method on each side

--json prints the same as one JSON object.

Exit status: 0 when the two runs tell the same story (same verdict status and
failing check, no divergence), 1 when they differ, 2 for a usage error, 3 when a
bundle cannot be read, 7 when a bundle is damaged (its stored bytes are not what
its writer wrote). A truncated bundle (a killed recorder) is read up to its
last complete event and compared as it is.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout = cmd.OutOrStdout()
			return runDiff(cmd.Context(), opts, args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the diff as JSON")
	f.IntVar(&opts.Context, "context", triage.DefaultDiffContext, "show `N` story steps either side of the divergence")
	return cmd
}

func runDiff(ctx context.Context, opts diffOptions, args []string) (err error) {
	if opts.stdout == nil {
		opts.stdout = os.Stdout
	}
	switch {
	case len(args) != 2:
		return usageError{fmt.Errorf("diff takes two bundles (A.zst B.zst), got %d argument(s)", len(args))}
	case opts.Context < 1:
		return usageError{fmt.Errorf("--context must be at least 1, got %d", opts.Context)}
	}
	if err := notDirectories("diff", args); err != nil {
		return err
	}
	args, f, err := fetchBundles(ctx, args)
	if err != nil {
		return err
	}
	defer f.done(&err)
	opts.stdout = f.writer(opts.stdout)
	res, err := triage.Diff(ctx, args[0], args[1], &triage.DiffOptions{Context: opts.Context})
	var be *triage.BundleError
	switch {
	case errors.As(err, &be):
		return unreadableError{err}
	case err != nil && ctx.Err() != nil:
		return interruptedError{err}
	case err != nil:
		return err
	}
	out := bufio.NewWriter(opts.stdout)
	if opts.JSON {
		err = res.WriteJSON(out)
	} else {
		err = res.WriteText(out)
	}
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	if !res.Same {
		return checkFailedError{"the runs differ"}
	}
	return nil
}
