package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/assert"
)

// checksOptions are the flags of `wireproof checks`.
type checksOptions struct {
	JSON  bool
	Suite string // only this suite's checks; "" means all

	stdout io.Writer
}

// newChecksCommand builds `wireproof checks`.
func newChecksCommand(g *globalOptions) *cobra.Command {
	var opts checksOptions
	cmd := &cobra.Command{
		Use:   "checks [--json] [--suite ID]",
		Short: "List every check replay and verify run, in order",
		Long: `checks prints the catalogue of checks (assert.Catalogue): every check of every
suite, in the order they are evaluated, with its suite, the stage that
evaluates it, its id (what a failure's check names) and the message a failure
carries. The background-delivery suite runs on verification runs, stage by
stage (observation, final, nested, closing, restart, run); protocol-conformance
runs on every protocol event of every bundle. docs/checks.md says what each
check fails on.

--json prints one JSON object per check (NDJSON): suite, stage, id, message.
--suite keeps one suite's checks; an unknown suite is a usage error (exit 2).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout = cmd.OutOrStdout()
			return runChecks(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the checks as NDJSON, one object per check")
	f.StringVar(&opts.Suite, "suite", "", "list only the checks of suite `ID` (background-delivery, protocol-conformance)")
	completeValues(cmd, "suite", suiteValues()...)
	return cmd
}

func runChecks(_ context.Context, opts checksOptions) error {
	if opts.stdout == nil {
		opts.stdout = os.Stdout
	}
	var rows []assert.CheckInfo
	suites := map[string]bool{}
	var names []string
	for _, c := range assert.Catalogue() {
		if !suites[c.Suite] {
			suites[c.Suite] = true
			names = append(names, c.Suite)
		}
		if opts.Suite == "" || c.Suite == opts.Suite {
			rows = append(rows, c)
		}
	}
	if opts.Suite != "" && !suites[opts.Suite] {
		return usageError{fmt.Errorf("checks: unknown suite %q (suites: %s)", opts.Suite, strings.Join(names, ", "))}
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.stdout)
		for _, c := range rows {
			if err := enc.Encode(c); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(opts.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUITE\tSTAGE\tID\tMESSAGE")
	for _, c := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Suite, c.Stage, c.ID, c.Message)
	}
	return tw.Flush()
}

// suiteValues are the suites of the catalogue, in order, for completion.
func suiteValues() []string {
	var out []string
	for _, c := range assert.Catalogue() {
		if !slices.Contains(out, c.Suite) {
			out = append(out, c.Suite)
		}
	}
	return out
}
