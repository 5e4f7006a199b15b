package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/internal/objstore"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/triage"
)

// replayOptions are the flags of `wireproof replay`.
type replayOptions struct {
	JSON  bool
	JUnit string
	Jobs  int
	Shard string // "I/N", 1 <= I <= N
	Force bool   // write --junit even over a bundle

	stdout, stderr io.Writer
	progress       bool // show a progress bar (stderr is a terminal)
	// delivery is the background-delivery scenario the bundles are judged
	// by; nil: delivery.Registered(), what verify records with.
	delivery *delivery.Spec
}

// newReplayCommand builds `wireproof replay`.
func newReplayCommand(g *globalOptions) *cobra.Command {
	var opts replayOptions
	cmd := &cobra.Command{
		Use:   "replay [flags] BUNDLE|DIR|s3://BUCKET/PREFIX...",
		Short: "Re-run the checks of recorded bundles and compare with their live verdicts",
		Long: `replay re-runs every check of each bundle offline, from its events alone, and
compares the verdict with the one the live run recorded (reproduced or diverged).
Directories are walked for *.zst bundles, in sorted order; an s3://bucket/prefix
is listed the same way (an s3:// URL naming one object is that bundle) and each
object is streamed into the replay, never downloaded whole. Bundles are replayed
in parallel; output keeps the input order.

--shard I/N (1 <= I <= N) keeps the bundles whose path relative to the walked root
or prefix (the base name for a single file) hashes (FNV-1a, 32 bit) to I-1 modulo N: a stable
share that does not move when other bundles are added.

Exit status: 0 when every bundle passed and reproduced its live verdict, 1 when a
check failed or a verdict diverged, 3 when a bundle could not be read (after the
others were replayed), 7 when a bundle is damaged (listed as DAMAGED, after the
others were replayed), 2 for bad flags, 5 when object storage refused the
credentials or could not be reached, 6 when --junit FILE could not be written.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if f, ok := opts.stderr.(*os.File); ok {
				opts.progress = isatty.IsTerminal(f.Fd())
			}
			return runReplay(cmd.Context(), opts, args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print verdicts as NDJSON, one line per bundle (deterministic)")
	f.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	forceFlag(f, &opts.Force)
	f.IntVar(&opts.Jobs, "jobs", runtime.GOMAXPROCS(0), "bundles replayed in parallel")
	f.StringVar(&opts.Shard, "shard", "", "replay only share `I/N` of the bundles (1 <= I <= N)")
	return cmd
}

// bundleRef is one bundle to replay: the path to open and the path relative
// to the root it was found under (the key for sharding).
type bundleRef struct {
	Path string
	Rel  string

	loc   *objstore.Location
	entry objstore.Entry
}

// replayOutcome is one bundle's result, or why it could not be read.
type replayOutcome struct {
	ref bundleRef
	res *replay.Result
	err error
	dur time.Duration // the bundle's replay (JUnit's testcase time)
}

func (o replayOutcome) outcome() replay.Reproduction {
	if o.res == nil {
		return ""
	}
	return o.res.Reproduction()
}

func (o replayOutcome) passed() bool {
	return o.res != nil && (o.res.Verdict.Status == assert.StatusPassed || o.skipped() || o.notApplicable()) && o.outcome() != replay.Diverged
}

// notApplicable reports a run whose scenario does not apply to its
// provider (the verdict's reason says why): nothing was checked, and
// nothing failed.
func (o replayOutcome) notApplicable() bool {
	return o.res != nil && o.res.Verdict.Status == assert.StatusNotApplicable
}

// skipped reports a bundle with nothing to check (a plain recording).
func (o replayOutcome) skipped() bool {
	return o.res != nil && o.res.Verdict.Status == assert.StatusSkipped
}

func runReplay(ctx context.Context, opts replayOptions, args []string) error {
	if opts.stdout == nil {
		opts.stdout = os.Stdout
	}
	if opts.stderr == nil {
		opts.stderr = os.Stderr
	}
	if opts.Jobs < 1 {
		return usageError{fmt.Errorf("--jobs must be at least 1, got %d", opts.Jobs)}
	}
	shardI, shardN, err := parseShard(opts.Shard)
	if err != nil {
		return usageError{err}
	}
	if err := refuseBundle(opts.JUnit, opts.Force, args); err != nil {
		return err
	}
	refs, err := collectBundles(ctx, args)
	if err != nil {
		return err
	}
	if shardN > 0 {
		refs = shard(refs, shardI, shardN)
	}
	started := time.Now()
	outcomes := replayAll(ctx, refs, opts)
	elapsed := time.Since(started)
	if ctx.Err() != nil {
		return interruptedError{ctx.Err()}
	}
	if err := printOutcomes(opts, outcomes); err != nil {
		return err
	}
	if opts.JUnit != "" {
		if err := writeJUnit(opts.JUnit, outcomes, junitRun{Started: started, Elapsed: elapsed}); err != nil {
			return outputError{opts.JUnit, err}
		}
	}
	var unreadable, damaged []string
	failed := 0
	for _, o := range outcomes {
		switch {
		case isDamaged(o.err):
			damaged = append(damaged, o.ref.Path)
		case o.err != nil:
			unreadable = append(unreadable, o.ref.Path)
		case !o.passed():
			failed++
		}
	}
	switch {
	case len(damaged) > 0:
		return damagedError{fmt.Errorf("%d bundle(s) are damaged: %s", len(damaged), strings.Join(damaged, ", "))}
	case len(unreadable) > 0:
		return unreadableError{fmt.Errorf("%d bundle(s) could not be read: %s", len(unreadable), strings.Join(unreadable, ", "))}
	case failed > 0:
		return checkFailedError{fmt.Sprintf("%d bundle(s) failed or diverged", failed)}
	}
	return nil
}

// parseShard parses "I/N"; "" means no sharding (n == 0).
func parseShard(s string) (i, n int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("--shard wants I/N with 1 <= I <= N, got %q", s)
	}
	return i, n, nil
}

// shard keeps the bundles whose relative path hashes to i-1 modulo n.
func shard(refs []bundleRef, i, n int) []bundleRef {
	var out []bundleRef
	for _, r := range refs {
		h := fnv.New32a()
		h.Write([]byte(filepath.ToSlash(r.Rel)))
		if int(h.Sum32()%uint32(n)) == i-1 {
			out = append(out, r)
		}
	}
	return out
}

// collectBundles expands the arguments: files (or objects) as given,
// directories (or s3:// prefixes) listed for *.zst in sorted order. A missing
// argument is unreadable.
func collectBundles(ctx context.Context, args []string) ([]bundleRef, error) {
	var refs []bundleRef
	for _, arg := range args {
		loc, err := openLocation(arg)
		if err != nil {
			return nil, err
		}
		entries, err := listBundles(ctx, loc)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			refs = append(refs, bundleRef{Path: e.Name, Rel: e.Rel, loc: loc, entry: e})
		}
	}
	return refs, nil
}

// forEachRef calls do(i) for i in [0, n) on up to jobs goroutines and returns
// when every call has returned; once ctx is done no further i is handed out.
func forEachRef(ctx context.Context, n, jobs int, do func(i int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(jobs, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				do(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
}

// replayRef replays one bundle: a file by its path, an object as a stream,
// never downloaded whole first.
func replayRef(ctx context.Context, ref bundleRef, spec delivery.Spec) (*replay.Result, error) {
	if !ref.entry.Remote() {
		return replay.ReplayFile(ctx, ref.Path, spec.Options(nil))
	}
	rc, err := ref.loc.Open(ctx, ref.entry)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return replay.ReplayStream(ctx, ref.Path, rc, spec.Options(nil))
}

// replayAll replays refs on opts.Jobs workers and returns outcomes in input order.
func replayAll(ctx context.Context, refs []bundleRef, opts replayOptions) []replayOutcome {
	out := make([]replayOutcome, len(refs))
	var bar *progressbar.ProgressBar
	if opts.progress && len(refs) > 3 {
		bar = progressbar.NewOptions(len(refs), progressbar.OptionSetWriter(opts.stderr),
			progressbar.OptionSetDescription("replay"), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	}
	var mu sync.Mutex
	forEachRef(ctx, len(refs), opts.Jobs, func(i int) {
		start := time.Now()
		res, err := replayRef(ctx, refs[i], delivery.SpecOr(opts.delivery))
		out[i] = replayOutcome{ref: refs[i], res: res, err: err, dur: time.Since(start)}
		if bar != nil {
			mu.Lock()
			bar.Add(1)
			mu.Unlock()
		}
	})
	if bar != nil {
		bar.Finish()
	}
	return out
}

// replayJSON is one line of --json output. Field order is fixed by the struct;
// nothing in it depends on time or scheduling.
type replayJSON struct {
	Path             string               `json:"path"`
	Status           assert.Status        `json:"status"` // passed, failed, skipped, not-applicable, unreadable or damaged
	Scenario         string               `json:"scenario,omitempty"`
	Outcome          replay.Reproduction  `json:"outcome,omitempty"`
	Verdict          *assert.Verdict      `json:"verdict,omitempty"`
	Recorded         *assert.Verdict      `json:"recorded,omitempty"`
	Diff             string               `json:"diff,omitempty"`
	Truncated        bool                 `json:"truncated,omitempty"`
	TruncatedReason  string               `json:"truncatedReason,omitempty"`
	Events           uint64               `json:"events,omitempty"`
	DecodeErrorCount int                  `json:"decodeErrorCount,omitempty"`
	DecodeErrors     []replay.DecodeError `json:"decodeErrors,omitempty"`
	Error            string               `json:"error,omitempty"`
}

func printOutcomes(opts replayOptions, outcomes []replayOutcome) error {
	var passed, skipped, notApplicable, failed, diverged, unreadable, damaged int
	enc := json.NewEncoder(opts.stdout)
	enc.SetEscapeHTML(false)
	for _, o := range outcomes {
		switch {
		case isDamaged(o.err):
			damaged++
		case o.err != nil:
			unreadable++
		case o.skipped() && o.passed():
			skipped++
		case o.notApplicable() && o.passed():
			notApplicable++
		case o.passed():
			passed++
		default:
			failed++
		}
		if o.outcome() == replay.Diverged {
			diverged++
		}
		if opts.JSON {
			if err := enc.Encode(o.jsonLine()); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(opts.stdout, o.textLine())
		if o.err == nil {
			writeSuiteFailures(opts.stdout, o.ref.Path, o.res.Verdict, "      ")
		}
		if o.res != nil && o.res.DecodeErrorCount > 0 {
			for _, d := range o.res.DecodeErrors {
				fmt.Fprintf(opts.stdout, "      undecodable @%d %s: %s\n", d.Seq, d.Conn, d.Err)
			}
			if extra := o.res.DecodeErrorCount - len(o.res.DecodeErrors); extra > 0 {
				fmt.Fprintf(opts.stdout, "      ... and %d more undecodable frames\n", extra)
			}
		}
	}
	summary := fmt.Sprintf("%d bundle(s): %d passed, %d failed, %d diverged, %d unreadable", len(outcomes), passed, failed, diverged, unreadable)
	if damaged > 0 {
		summary += fmt.Sprintf(", %d damaged", damaged)
	}
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped (no verification run to check)", skipped)
	}
	if notApplicable > 0 {
		summary += fmt.Sprintf(", %d not applicable (the scenario cannot apply to the provider: nothing was verified)", notApplicable)
	}
	if opts.JSON {
		fmt.Fprintln(opts.stderr, summary)
	} else {
		fmt.Fprintln(opts.stdout, summary)
	}
	return nil
}

func (o replayOutcome) textLine() string {
	if o.err != nil {
		return fmt.Sprintf("%s  %s  %v", strings.ToUpper(string(errorStatus(o.err))), o.ref.Path, o.err)
	}
	v := o.res.Verdict
	status := "PASS"
	switch {
	case !o.passed():
		status = "FAIL"
	case o.skipped():
		status = "SKIP"
	case o.notApplicable():
		status = "N/A"
	}
	scenario := o.res.Scenario
	if scenario == "" {
		scenario = "-"
	}
	parts := []string{status, scenario, o.ref.Path}
	if f := v.Failure; f != nil {
		parts = append(parts, fmt.Sprintf("%s @%d: %s", f.Check, f.Seq, f.Message))
	}
	if v.Reason != "" {
		parts = append(parts, triage.NotApplicableText(v))
	}
	parts = append(parts, string(o.outcome()))
	line := strings.Join(parts, "  ")
	if o.res.Truncated {
		line += "  (truncated)"
	}
	if suites := triage.SuitesLine(v); suites != "" {
		line += "  [" + suites + "]"
	}
	if o.outcome() == replay.Diverged {
		line += "\n" + indent(o.res.Diff, "      ")
	}
	return line
}

func (o replayOutcome) jsonLine() replayJSON {
	j := replayJSON{Path: filepath.ToSlash(o.ref.Path)}
	if o.err != nil {
		j.Status, j.Error = errorStatus(o.err), o.err.Error()
		return j
	}
	v := o.res.Verdict
	j.Status, j.Scenario, j.Outcome, j.Verdict, j.Recorded = v.Status, o.res.Scenario, o.outcome(), &v, o.res.Recorded
	if !o.passed() {
		j.Status = assert.StatusFailed
	}
	j.Diff, j.Truncated, j.TruncatedReason, j.Events = o.res.Diff, o.res.Truncated, o.res.TruncatedReason, o.res.Events
	j.DecodeErrorCount, j.DecodeErrors = o.res.DecodeErrorCount, o.res.DecodeErrors
	return j
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}
