package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/internal/bundleindex"
)

// indexOptions are the flags of `wireproof index`.
type indexOptions struct {
	Out   string
	Jobs  int
	Stats bool
	Force bool // write -o even over a bundle

	stdout, stderr io.Writer
}

// newIndexCommand builds `wireproof index`.
func newIndexCommand(g *globalOptions) *cobra.Command {
	var opts indexOptions
	cmd := &cobra.Command{
		Use:   "index [-o INDEX.ndjson] [--stats] DIR|BUNDLE|s3://BUCKET/PREFIX|INDEX.ndjson...",
		Short: "Write one NDJSON line per bundle (manifest, verdict, failing check, timing, sizes); flake figures",
		Long: `index reads every bundle under the arguments (directories and s3:// prefixes are
listed in sorted order, objects streamed, never downloaded whole) and writes one
NDJSON line per bundle, in that order, to stdout or -o FILE:

  path, scenario, iteration, provider, model, revision, dirty, tool, started,
  options, status (the recorded verdict: passed, failed, skipped; incomplete
  when the run left no verdict; unreadable), check, seq and message (the
  first failing check and the event that decided it), events, durationMs,
  bytes (uncompressed), size (stored), truncated, digest, error

Standard engines read the file as it is (DuckDB: read_json_auto('INDEX.ndjson')).

--stats prints, instead of the lines (or besides them, with -o), the pass and
fail counts, the fail rate and whether it is flaky (both passed and failed) of
each scenario across its repeats, and the failures of each check. An argument
ending in .ndjson is read as an index written before.

Exit status: 0, or 3 when a bundle could not be read (its line says why, and
the others are written), 7 when a bundle is damaged (listed as damaged, the
others written), 5 when object storage refused the credentials or could not be
reached, 6 when -o FILE could not be written (or would replace a bundle), 2 for
bad flags.`,
		Example: `  wireproof index -o index.ndjson s3://evidence/nightly/
  wireproof index --stats ./evidence
  wireproof index --stats index.ndjson`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runIndex(cmd.Context(), opts, args)
		},
	}
	f := cmd.Flags()
	outFlag(f, &opts.Out, "write the index to `FILE` instead of stdout")
	f.IntVar(&opts.Jobs, "jobs", runtime.GOMAXPROCS(0), "bundles read in parallel")
	f.BoolVar(&opts.Stats, "stats", false, "print per-scenario and per-check pass, fail and flake figures")
	forceFlag(f, &opts.Force)
	return cmd
}

func runIndex(ctx context.Context, opts indexOptions, args []string) error {
	if opts.stdout == nil {
		opts.stdout, opts.stderr = os.Stdout, os.Stderr
	}
	if opts.Jobs < 1 {
		return usageError{fmt.Errorf("--jobs must be at least 1, got %d", opts.Jobs)}
	}
	if err := refuseBundle(opts.Out, opts.Force, args); err != nil {
		return err
	}
	var entries []bundleindex.Entry
	var bundles []string
	for _, arg := range args {
		if strings.HasSuffix(arg, ".ndjson") || strings.HasSuffix(arg, ".jsonl") {
			read, err := readIndex(arg)
			if err != nil {
				return err
			}
			entries = append(entries, read...)
			continue
		}
		bundles = append(bundles, arg)
	}
	if len(bundles) > 0 {
		refs, err := collectBundles(ctx, bundles)
		if err != nil {
			return err
		}
		entries = append(entries, summarizeAll(ctx, refs, opts.Jobs)...)
		if ctx.Err() != nil {
			return interruptedError{ctx.Err()}
		}
	}
	write := func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	switch {
	case opts.Out != "":
		if err := writeFileAtomic(opts.Out, write); err != nil {
			return err
		}
		fmt.Fprintf(opts.stderr, "%d bundle(s) indexed into %s\n", len(entries), opts.Out)
	case !opts.Stats:
		if err := write(opts.stdout); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	}
	if opts.Stats {
		scen, chk := bundleindex.Stats(entries)
		if err := bundleindex.WriteStats(opts.stdout, scen, chk); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	}
	var unreadable, damaged []string
	for _, e := range entries {
		switch e.Status {
		case bundleindex.StatusUnreadable:
			unreadable = append(unreadable, e.Path)
		case bundleindex.StatusDamaged:
			damaged = append(damaged, e.Path)
		}
	}
	if len(damaged) > 0 {
		return damagedError{fmt.Errorf("%d bundle(s) are damaged: %s", len(damaged), strings.Join(damaged, ", "))}
	}
	if len(unreadable) > 0 {
		return unreadableError{fmt.Errorf("%d bundle(s) could not be read: %s", len(unreadable), strings.Join(unreadable, ", "))}
	}
	return nil
}

// summarizeAll reads refs on jobs workers, streaming each, and returns their
// entries in input order.
func summarizeAll(ctx context.Context, refs []bundleRef, jobs int) []bundleindex.Entry {
	out := make([]bundleindex.Entry, len(refs))
	forEachRef(ctx, len(refs), jobs, func(i int) { out[i] = summarizeRef(ctx, refs[i]) })
	return out
}

func summarizeRef(ctx context.Context, ref bundleRef) bundleindex.Entry {
	rc, err := ref.loc.Open(ctx, ref.entry)
	if err != nil {
		return bundleindex.Entry{Path: ref.Path, Size: ref.entry.Size, Status: bundleindex.StatusUnreadable, Error: err.Error()}
	}
	defer rc.Close()
	e, _ := bundleindex.Summarize(ctx, ref.Path, rc, ref.entry.Size)
	return e
}

// readIndex reads an index file written before.
func readIndex(path string) ([]bundleindex.Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unreadableError{err}
	}
	defer f.Close()
	var out []bundleindex.Entry
	dec := json.NewDecoder(f)
	for line := 1; ; line++ {
		var e bundleindex.Entry
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, unreadableError{fmt.Errorf("index %s: entry %d: %w", path, line, err)}
		}
		out = append(out, e)
	}
}
