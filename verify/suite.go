package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/internal/filelock"
	"github.com/wireproof/wireproof/internal/spool"
	"github.com/wireproof/wireproof/record"
)

// SuiteEntry is one line of results.json.
type SuiteEntry struct {
	Iteration int             `json:"iteration"`
	Scenario  assert.Scenario `json:"scenario"`
	Status    assert.Status   `json:"status"` // passed, failed, not-applicable or interrupted
	Bundle    string          `json:"bundle,omitempty"`
	Verdict   string          `json:"verdict,omitempty"`
	Check     string          `json:"check,omitempty"` // the failing check, if any
	// Suites is how every suite of the run's verdict ended, each with its
	// failing check (the verdict file's suites).
	Suites   []assert.SuiteResult `json:"suites,omitempty"`
	ExitCode int                  `json:"exitCode"`
}

// SuiteResult is the outcome of a suite.
type SuiteResult struct {
	OutDir      string
	Results     string // path of results.json
	Entries     []SuiteEntry
	Interrupted bool
}

// Failed reports whether any run of the suite failed (a run whose scenario
// does not apply to the provider did not).
func (s *SuiteResult) Failed() bool {
	for _, e := range s.Entries {
		if e.Status != assert.StatusPassed && e.Status != assert.StatusNotApplicable {
			return true
		}
	}
	return false
}

// RunSuite runs every requested scenario and repetition, each isolated in its
// own child process (this executable's verify verb), and keeps results.json in
// the output directory up to date after every run. An interrupt is forwarded to
// the running child, which closes its bundle, and ends the suite.
func RunSuite(ctx context.Context, opts Options) (*SuiteResult, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	exe := opts.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	if opts.OutDir, err = makeOutDir(opts.OutDir); err != nil {
		return nil, err
	}
	scenarios := Scenarios
	if opts.Scenario != ScenarioAll {
		scenarios = []assert.Scenario{opts.Scenario}
	}
	// A directory refused for the bundles it holds is left as it was; one
	// that passes is locked for the suite.
	if err := checkSuiteFree(opts.OutDir, scenarios, opts.Repeat); err != nil {
		return nil, err
	}
	unlock, err := lockOutDir(opts.OutDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	fmt.Fprintf(opts.Stdout, "Evidence: %s\n", opts.OutDir)
	res := &SuiteResult{OutDir: opts.OutDir, Results: filepath.Join(opts.OutDir, "results.json")}
	total, n := opts.Repeat*len(scenarios), 0
	for it := 1; it <= opts.Repeat; it++ {
		for _, sc := range scenarios {
			n++
			// "Run 3/8: native (iteration 1/2)": which run of the suite this
			// is, not which repetition, which is the same for every scenario.
			fmt.Fprintf(opts.Stdout, "Run %d/%d: %s (iteration %d/%d)\n", n, total, sc, it, opts.Repeat)
			entry := runChild(ctx, exe, opts, sc, it)
			res.Entries = append(res.Entries, entry)
			if err := writeResults(res); err != nil {
				return res, err
			}
			if entry.Status == assert.StatusInterrupted || ctx.Err() != nil {
				res.Interrupted = true
				return res, nil
			}
		}
	}
	return res, nil
}

func runChild(ctx context.Context, exe string, opts Options, scenario assert.Scenario, iteration int) SuiteEntry {
	args := []string{"verify", "--scenario", string(scenario), "--out", opts.OutDir,
		"--iteration", fmt.Sprint(iteration),
		"--timeout", fmt.Sprint(opts.Timeout.Seconds()),
		"--provider", opts.Provider, "--model", opts.Model}
	if opts.ProviderCLI != "" {
		args = append(args, "--provider-cli", opts.ProviderCLI)
	}
	for _, p := range opts.ModelCassette {
		args = append(args, "--model-cassette", p)
	}
	if opts.ModelFast {
		args = append(args, "--model-fast")
	}
	if opts.ModelUpstream != "" {
		args = append(args, "--model-upstream", opts.ModelUpstream)
	}
	if opts.ModelCA != "" {
		args = append(args, "--model-ca", opts.ModelCA)
	}
	if opts.ScriptedProvider {
		args = append(args, "--scripted-provider")
	}
	if opts.FailGate {
		args = append(args, "--fail-gate")
	}
	if opts.Fault != "" {
		args = append(args, "--fault", opts.Fault)
	}
	if opts.Serialization != "" {
		args = append(args, "--serialization", opts.Serialization)
	}
	if opts.KeepPatch {
		args = append(args, "--keep-patch")
	}
	if opts.KeepWorkspace {
		args = append(args, "--keep-workspace")
	}
	if opts.ServerCmd != "" {
		args = append(args, "--server-cmd", opts.ServerCmd)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout, cmd.Stderr = opts.Stdout, os.Stderr
	cmd.Env = suiteEnv(opts.Redact) // the secrets, off the child's command line
	if opts.Status != nil {
		cmd.Stderr = opts.Status
	}
	// Forward the interrupt: the child closes its bundle cleanly and exits 130.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = StopGrace + 20*time.Second
	// Should the suite itself be killed (SIGKILL), the child gets SIGTERM and
	// ends as it does on an interrupt: bundle closed, server stopped.
	wait, err := record.StartTied(cmd, syscall.SIGTERM)
	if err == nil {
		err = wait()
	}
	entry := SuiteEntry{Iteration: iteration, Scenario: scenario}
	name := runName(scenario, iteration)
	if b := filepath.Join(opts.OutDir, name+".zst"); fileExists(b) {
		entry.Bundle = b
	}
	var verdict assert.Verdict
	if v := filepath.Join(opts.OutDir, name+".verdict.json"); fileExists(v) {
		entry.Verdict = v
		if b, err := os.ReadFile(v); err == nil && json.Unmarshal(b, &verdict) == nil {
			if verdict.Failure != nil {
				entry.Check = verdict.Failure.Check
			}
			entry.Suites = verdict.Suites
		}
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		entry.Status = assert.StatusPassed
	case errors.As(err, &exit) && exit.ExitCode() == 130, ctx.Err() != nil:
		entry.Status, entry.ExitCode = assert.StatusInterrupted, 130
	case verdict.Status == assert.StatusNotApplicable && errors.As(err, &exit):
		// The child said so in its exit status; its verdict says why.
		entry.Status, entry.ExitCode = assert.StatusNotApplicable, exit.ExitCode()
	default:
		entry.Status, entry.ExitCode = assert.StatusFailed, 1
		if errors.As(err, &exit) {
			entry.ExitCode = exit.ExitCode()
		}
	}
	return entry
}

func writeResults(res *SuiteResult) error {
	b, err := json.MarshalIndent(res.Entries, "", "  ")
	if err != nil {
		return err
	}
	return outputErr(res.Results, os.WriteFile(res.Results, append(b, '\n'), 0o600))
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// checkSuiteFree refuses an output directory that already holds a bundle
// the suite would write, the first in the suite's order, as checkFree does
// for one run. It reads the directory once: what it costs is what the
// directory holds, not the suite's length (--repeat 1000000000).
// outLock is the file in an output directory a suite holds locked while
// it writes there (internal/filelock: released by the system when the
// process dies, so a killed suite leaves no stale lock, only the file,
// which uploads pass over).
const outLock = spool.SuiteLock

// lockOutDir takes dir's lock for the suite, or refuses with an
// *OutputError wrapping *BusyError while another suite holds it: two
// suites in one directory each refused the other's bundles mid-suite and
// overwrote each other's results.json.
func lockOutDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, outLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, outputErr(dir, err)
	}
	if err := filelock.TryLock(f); err != nil {
		f.Close()
		return nil, &OutputError{Path: dir, Err: &BusyError{}}
	}
	return func() {
		filelock.Unlock(f)
		f.Close()
	}, nil
}

// BusyError says that another verify suite is writing into the output
// directory.
type BusyError struct{}

func (*BusyError) Error() string {
	return "another wireproof verify suite is writing into it: wait for it, or choose another directory"
}

// Is makes errors.Is(err, fs.ErrExist) true, as for a bundle already there.
func (*BusyError) Is(target error) bool { return target == fs.ErrExist }

func checkSuiteFree(dir string, scenarios []assert.Scenario, repeat int) error {
	entries, err := osReadDir(dir)
	if err != nil {
		return outputErr(dir, err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	if name := FirstClash(names, scenarios, 1, repeat); name != "" {
		return &OutputError{Path: dir, Err: &ExistsError{Name: name}}
	}
	return nil
}

// FirstClash returns the first of names (the file names an output holds,
// idle-3.zst) that is a bundle a suite of scenarios over the iterations
// first..last would write, first in the order the suite writes them
// (iteration by iteration, the scenarios in their order); "" if none is.
// Its cost is that of names, whatever the number of iterations.
func FirstClash(names []string, scenarios []assert.Scenario, first, last int) string {
	clash, clashIt, clashSc := "", 0, 0
	for _, n := range names {
		base, ok := strings.CutSuffix(n, ".zst")
		i := strings.LastIndexByte(base, '-')
		if !ok || i < 0 {
			continue
		}
		sc := assert.Scenario(base[:i])
		if it, err := strconv.Atoi(base[i+1:]); err != nil || it < first || it > last || runName(sc, it) != base {
			continue // not a name a run writes (idle-01.zst), or not one of these iterations
		} else if k := slices.Index(scenarios, sc); k >= 0 && (clash == "" || it < clashIt || (it == clashIt && k < clashSc)) {
			clash, clashIt, clashSc = n, it, k
		}
	}
	return clash
}
