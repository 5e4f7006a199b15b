package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/fixtures"
	"github.com/wireproof/wireproof/internal/spool"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/triage"
	"github.com/wireproof/wireproof/verify"
)

type verifyOptions struct {
	serverCmd string
	scenario  string
	repeat    int
	timeout   time.Duration
	provider  string
	model     string
	failGate  bool
	scripted  bool
	cli       string
	fault     string
	serial    string
	out       string
	keep      bool
	keepPatch bool
	keepRuns  string
	iteration int
	cassette  []string
	fast      bool
	strict    bool
	upstream  string
	modelCA   string
	realModel bool
	redact    []string
	// serverCmdSet: --server-cmd was given, so an empty value is a mistake,
	// not the embedded fixture server.
	serverCmdSet bool
}

// newVerifyCommand builds `wireproof verify`.
func newVerifyCommand(g *globalOptions) *cobra.Command {
	var opts verifyOptions
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Run the background-delivery scenarios live, recorded and judged",
		Long: `verify runs the background-delivery scenarios of a T3-compatible orchestration
server (idle, active, native, nested) and the restart durability check, with all
traffic going through the recorder. Each run writes a bundle (<scenario>-<n>.zst)
and its verdict (<scenario>-<n>.verdict.json) into the output directory; a suite
(--scenario all, or --repeat > 1) also writes results.json.

Without --server-cmd it runs the embedded fixture server, so it needs no provider
credentials. --server-cmd is exec'd by sh as one command, in the run's work
directory, with "start --bootstrap-fd 3 --log-level debug" appended: give
absolute paths, and the environment as "env VAR=value cmd"; a compound command
("cd /t3 && node ...") is refused before anything starts.

--provider-cli PATH runs the server's Claude sessions on the real Claude Code CLI
at PATH (the embedded fixture server starts it as T3's Claude adapter does; a
real server finds it as claude first on its PATH and as its binaryPath setting),
through 'wireproof provider wrap', against wireproof's scripted Messages API on
loopback. The bundle holds the client's traffic, the CLI's stdio, its MCP
requests and its model calls; its API key is a random one of the run, its home
a private directory of the run. --fault then also takes a model fault.
A Codex CLI at PATH (its --version says codex-cli) runs the server's codex
sessions the same way (--provider codex, implied): the server is given it as
providers.codex.binaryPath and a private CODEX_HOME as homePath, whose
config.toml names wireproof's scripted Responses API; Codex has no scripted
stand-in, so --provider codex needs --provider-cli.
--scripted-provider instead runs wireproof's own stand-in for the CLI.
--model-cassette BUNDLE|DIR (repeatable, with --provider-cli) answers the CLI's
model calls from the ones recorded in earlier runs' bundles instead of the
scripted model, run-bound values bound to this run's (docs/model.md); a call it
has no recording of fails the check model-cassette-miss, and with --strict
exits 4. --model-upstream URL (with --provider-cli) records the CLI's model
calls against that Messages API instead (a real model: the CLI gets
$ANTHROPIC_API_KEY, redacted in every spelling), trusting --model-ca's PEM
certificates besides the system's. --real-model records against the real
model without naming it: $ANTHROPIC_BASE_URL when set, else the public
Anthropic API.

--serialization ndjson makes the driver speak Effect RPC's ndjson serialization
and starts the embedded fixture server with it (bootstrap "serialization"); a
real server must be configured for it (RpcSerialization.layerNdjson), since
Effect does not negotiate it.

--redact SECRET (repeatable) replaces a secret by [REDACTED] wherever it occurs
in the recording, in every spelling, as 'wireproof record --redact' does. The
values (8 bytes or longer) of the environment's credential variables, which the
server inherits, are redacted without it: names ending in API_KEY, APIKEY,
TOKEN, SECRET, SECRET_KEY, ACCESS_KEY or PRIVATE_KEY, or holding PASSWORD or
PASSWD, in any case (docs/redaction.md).

--out s3://bucket/prefix records into a local spool directory as usual and
uploads the files when the run is over, each bundle with object metadata and
tags (scenario, status, check, revision, provider, model, iteration). An upload
that still fails after retries leaves the files in the spool, says where, and
exits 5; 'wireproof upload' (or the next run to object storage) sends them.
--keep failed keeps only the bundles of runs that did not pass.`,
		Example: `  wireproof verify
  wireproof verify --scenario nested --out ./evidence
  wireproof verify --server-cmd "node /path/to/t3code/apps/server/src/bin.ts" --scenario idle
  wireproof verify --provider codex --provider-cli "$(command -v codex)" --scenario idle`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o := opts
			o.serverCmdSet = cmd.Flags().Changed("server-cmd")
			return runVerify(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.serverCmd, "server-cmd", "", "the server's command line (default: the embedded fixture server)")
	f.StringVar(&opts.scenario, "scenario", string(verify.ScenarioAll), "all, idle, active, native or nested")
	f.IntVar(&opts.repeat, "repeat", 1, "run the scenarios this many times")
	durationFlag(f, &opts.timeout, "timeout", verify.DefaultTimeout, "how long a run may take: a duration (90s, 2m) or seconds (90)")
	f.StringVar(&opts.provider, "provider", "", "provider instance id: "+verify.DriverClaude+" or "+verify.DriverCodex+" (default "+verify.DefaultProvider+", or the --provider-cli's: "+verify.DriverCodex+" for the Codex CLI)")
	f.StringVar(&opts.model, "model", "", "model name (default "+verify.DefaultModel+"; for "+verify.DriverCodex+" "+verify.DefaultCodexModel+")")
	f.BoolVar(&opts.failGate, "fail-gate", false, "make the gate answer 503 instead of the result")
	f.BoolVar(&opts.scripted, "scripted-provider", false, "run the server's Claude sessions on 'wireproof provider claude' (a scripted claude first on its PATH and as its binaryPath setting): no credentials needed")
	f.StringVar(&opts.cli, "provider-cli", "", "run the server's Claude sessions on the real Claude Code CLI at this path, against wireproof's scripted model API (docs/providers.md): no credentials needed, Node not needed by wireproof")
	f.StringArrayVar(&opts.redact, "redact", nil, "a secret to replace by [REDACTED] wherever it occurs in the recording (repeatable); the values of credential variables of the environment (*_API_KEY, *_TOKEN, *_SECRET, *PASSWORD*, ...) always are")
	f.StringArrayVar(&opts.cassette, "model-cassette", nil, "with --provider-cli: answer the CLI's model calls from the model calls recorded in this bundle or directory of bundles (repeatable) instead of the scripted model")
	f.BoolVar(&opts.fast, "model-fast", false, "with --model-cassette: play the recorded answers at once instead of at their recorded pace")
	f.BoolVar(&opts.strict, "strict", false, "with --model-cassette and one --scenario: exit 4 if a model call matched no recorded one")
	f.StringVar(&opts.upstream, "model-upstream", "", "with --provider-cli: record the CLI's model calls against this Messages API (a real model, http or https) instead of the scripted model; the CLI's key is $ANTHROPIC_API_KEY")
	f.BoolVar(&opts.realModel, "real-model", false, "with --provider-cli: record the CLI's model calls against the real model, --model-upstream when given, else $ANTHROPIC_BASE_URL when set, else "+verify.PublicModelAPI+"; the CLI's key is $ANTHROPIC_API_KEY")
	f.StringVar(&opts.modelCA, "model-ca", "", "with --model-upstream: a PEM file of CA certificates to trust for it besides the system's")
	f.StringVar(&opts.fault, "fault", "", "fault mode of the embedded fixture server (see 'wireproof fixture faults'), or with --provider-cli a model fault ("+strings.Join(model.Faults, ", ")+")")
	f.StringVar(&opts.serial, "serialization", "json", "Effect RPC serialization the server speaks, json or ndjson (the embedded fixture is started with it)")
	outFlag(f, &opts.out, "output directory or s3://bucket/prefix (default: a new directory under the system temp dir)")
	f.StringVar(&opts.keepRuns, "keep", "all", "which runs' bundles to keep: all, or failed (passing runs' bundles are removed)")
	f.BoolVar(&opts.keep, "keep-workspace", false, "keep each run's server home and project in the output directory")
	f.BoolVar(&opts.keepPatch, "keep-patch", false, "keep the repository's uncommitted changes (git diff) in the bundle as working-tree.patch, redacted")
	f.IntVar(&opts.iteration, "iteration", 1, "iteration number of a single run (set by suites)")
	f.MarkHidden("iteration")
	completeValues(cmd, "scenario", scenarioValues()...)
	completeValues(cmd, "fault", append(faultValues(), modelFaultValues()...)...)
	completeValues(cmd, "serialization", "json", "ndjson")
	completeValues(cmd, "keep", "all", "failed")
	return cmd
}

func runVerify(ctx context.Context, o verifyOptions, stdout, stderr io.Writer) error {
	if strings.TrimSpace(o.serverCmd) == "" && (o.serverCmdSet || o.serverCmd != "") {
		return usageError{errors.New("invalid --server-cmd: empty command (leave the flag out to run the embedded fixture server)")}
	}
	if o.timeout <= 0 {
		return usageError{fmt.Errorf("invalid --timeout %v: want a positive duration (90s, 2m) or seconds (90)", o.timeout)}
	}
	if o.fault != "" && strings.TrimSpace(o.serverCmd) == "" && model.CheckFault(o.fault) != nil {
		if _, err := fixtures.LookupFault(o.fault); err != nil {
			return usageError{fmt.Errorf("invalid --fault: %w", err)}
		}
	}
	if o.serial != "json" && o.serial != "ndjson" {
		return usageError{fmt.Errorf("invalid --serialization %q: want json or ndjson", o.serial)}
	}
	if o.repeat < 1 {
		return usageError{fmt.Errorf("invalid --repeat %d: want a positive integer", o.repeat)}
	}
	if o.strict && (len(o.cassette) == 0 || o.scenario == string(verify.ScenarioAll) || o.repeat > 1) {
		return usageError{errors.New("invalid --strict: it needs --model-cassette and a single run (one --scenario, no --repeat)")}
	}
	if o.fast && len(o.cassette) == 0 {
		return usageError{errors.New("invalid --model-fast: it needs --model-cassette")}
	}
	secrets, err := suiteSecrets(o.redact)
	if err != nil {
		return err
	}
	keep, err := spool.ParseKeep(o.keepRuns)
	if err != nil {
		return usageError{err}
	}
	out, err := startOutput(ctx, o, keep, stderr)
	if err != nil {
		return err
	}
	defer out.release()
	opts := verify.Options{
		ServerCmd: o.serverCmd,
		Scenario:  assert.Scenario(o.scenario),
		Repeat:    o.repeat,
		Timeout:   o.timeout,
		Provider:  o.provider,
		Model:     o.model,
		FailGate:  o.failGate,
		Fault:     o.fault,

		ScriptedProvider: o.scripted,
		ProviderCLI:      o.cli,
		ModelCassette:    o.cassette,
		ModelFast:        o.fast,
		ModelUpstream:    o.upstream,
		ModelCA:          o.modelCA,
		RealModel:        o.realModel,
		Serialization:    o.serial,
		OutDir:           out.dir,
		Iteration:        o.iteration,
		KeepWorkspace:    o.keep,
		KeepPatch:        o.keepPatch,
		Redact:           secrets,
		Stdout:           stdout,
	}
	if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		opts.Status = stderr
	}

	verify.ToolVersion = "wireproof " + version
	if opts.Suite() {
		res, err := verify.RunSuite(ctx, opts)
		if err != nil {
			return verifyError(err)
		}
		fmt.Fprintln(stdout)
		upErr := out.finish(ctx, res.Interrupted, stdout)
		passed, notApplicable := 0, 0
		for _, e := range res.Entries {
			switch e.Status {
			case assert.StatusPassed:
				passed++
			case assert.StatusNotApplicable:
				notApplicable++
			}
			line := fmt.Sprintf("%-14s %-7s #%d  %s", strings.ToUpper(string(e.Status)), e.Scenario, e.Iteration, out.shown(e.Bundle))
			if e.Check != "" {
				line += "  " + e.Check
			}
			if len(e.Suites) > 0 {
				line += "  (" + triage.SuitesLine(assert.Verdict{Suites: e.Suites}) + ")"
			}
			fmt.Fprintln(stdout, line)
		}
		summary := fmt.Sprintf("%d run(s): %d passed, %d not passed", len(res.Entries), passed, len(res.Entries)-passed-notApplicable)
		if notApplicable > 0 {
			summary += fmt.Sprintf(", %d not applicable (its scenario cannot apply to the provider: not verified)", notApplicable)
		}
		fmt.Fprintln(stdout, summary)
		fmt.Fprintf(stdout, "Results: %s\nReplay:  wireproof replay %s\n", out.shown(res.Results), out.shown(res.OutDir))
		switch {
		case upErr != nil:
			return upErr
		case res.Interrupted:
			return interruptedError{ctx.Err()}
		case res.Failed():
			return checkFailedError{"a verification run failed"}
		case passed == 0 && notApplicable > 0:
			return notApplicableError{"nothing was verified: no run's scenario applies to the provider"}
		}
		return nil
	}
	res, err := verify.Run(ctx, opts)
	if err != nil {
		return verifyError(err)
	}
	upErr := out.finish(ctx, res.Interrupted, stdout)
	v := res.Verdict
	writeRunResult(stdout, res.Scenario, res.Events, out.shown(res.Bundle), v)
	writeServerOutput(stdout, res.ServerOutput)
	fmt.Fprintf(stdout, "Verdict: %s\n", out.shown(res.VerdictFile))
	if res.Workspace != "" {
		fmt.Fprintf(stdout, "Workspace: %s\n", res.Workspace)
	}
	if c := res.ModelCassette; c != nil {
		fmt.Fprint(stdout, c.Summary())
	}
	switch {
	case upErr != nil:
		return upErr
	case res.Interrupted:
		return interruptedError{ctx.Err()}
	case o.strict && res.ModelCassette != nil && res.ModelCassette.Missed > 0:
		return playbackMissedError{misses: res.ModelCassette.Missed, verb: "verify"}
	case v.Status == assert.StatusNotApplicable:
		return notApplicableError{"nothing was verified: the scenario does not apply to the provider"}
	case v.Status != assert.StatusPassed:
		return checkFailedError{"verification failed"}
	}
	return nil
}

// writeRunResult prints how one run ended: PASS or FAIL, every suite's
// status and failing check, and every failed suite's failure in detail.
func writeRunResult(w io.Writer, scenario assert.Scenario, events uint64, bundle string, v assert.Verdict) {
	status := "FAIL"
	switch v.Status {
	case assert.StatusPassed:
		status = "PASS"
	case assert.StatusNotApplicable:
		status = "N/A"
	}
	fmt.Fprintf(w, "%s %s  %d events  %s\n", status, scenario, events, bundle)
	if na := triage.NotApplicableText(v); na != "" {
		fmt.Fprintf(w, "  %s\n  nothing was verified: this run neither passed nor failed\n", na)
	}
	if line := triage.SuitesLine(v); line != "" {
		fmt.Fprintf(w, "  suites: %s\n", line)
	}
	writeSuiteFailures(w, bundle, v, "  ")
}

// writeServerOutput prints the last lines a server that did not come up
// printed (verify.Result.ServerOutput), so a --server-cmd that dies at
// startup says why on the console, not only in the bundle.
func writeServerOutput(w io.Writer, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "  the server did not come up; its last output (%d line(s)):\n", len(lines))
	for _, l := range lines {
		fmt.Fprintf(w, "    | %s\n", l)
	}
}

// suiteSecrets are the --redact values and, in a suite's run, the suite's
// (verify.RedactEnv), which it takes out of the environment so the server
// does not inherit them.
func suiteSecrets(flags []string) ([]string, error) {
	v, ok := os.LookupEnv(verify.RedactEnv)
	if !ok {
		return flags, nil
	}
	os.Unsetenv(verify.RedactEnv)
	var more []string
	if err := json.Unmarshal([]byte(v), &more); err != nil {
		return nil, fmt.Errorf("invalid $%s: want a JSON array of strings: %w", verify.RedactEnv, err)
	}
	return append(slices.Clip(flags), more...), nil
}

func verifyError(err error) error {
	var oe *verify.OptionError
	if errors.As(err, &oe) {
		return usageError{err}
	}
	var out *verify.OutputError
	if errors.As(err, &out) {
		return outputError{out.Path, out.Err}
	}
	return err
}

// scenarioValues are what --scenario takes, for completion.
func scenarioValues() []string {
	out := []string{cobra.CompletionWithDesc(string(verify.ScenarioAll), "every scenario, then the restart check")}
	for _, s := range assert.Scenarios() {
		out = append(out, string(s))
	}
	return out
}

// faultValues are the fixture server's fault modes, each with the check it
// trips, for completion.
// modelFaultValues are the scripted model's fault modes, for verify
// --provider-cli --fault.
func modelFaultValues() []string {
	var out []string
	for _, f := range model.Faults {
		out = append(out, cobra.CompletionWithDesc(f, "with --provider-cli: trips "+model.FaultChecks[f]))
	}
	return out
}

func faultValues() []string {
	var out []string
	for _, f := range fixtures.Faults {
		out = append(out, cobra.CompletionWithDesc(f.Name, "trips "+f.Check))
	}
	return out
}
