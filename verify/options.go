package verify

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/replay"
)

// Scenarios in the order a suite runs them (assert.Scenarios).
var Scenarios = assert.Scenarios()

// ScenarioAll, as Options.Scenario, runs every scenario.
const ScenarioAll assert.Scenario = "all"

// Defaults of the reference verifier.
const (
	DefaultTimeout  = 240 * time.Second
	DefaultProvider = "claudeAgent"
	DefaultModel    = "claude-sonnet-4-6"
	ReadyTimeout    = 60 * time.Second
	StopGrace       = 10 * time.Second
)

// Options configure a run or a suite. The zero value of each field means its
// default.
type Options struct {
	// ServerCmd is the server's command line, run by sh as a shell would run
	// it (quotes, variables), with "start --bootstrap-fd 3 --log-level debug"
	// appended as its arguments. Empty: the embedded fixture server (this
	// executable's "fixture" verb).
	ServerCmd string
	Scenario  assert.Scenario // ScenarioAll or one scenario (default all)
	Repeat    int             // repetitions of the scenario set (default 1)
	Timeout   time.Duration   // per run, default 240s
	// Provider is the thread's provider instance id (default DriverClaude,
	// or ProviderCLI's driver); Model its model (default DefaultModel, or
	// DefaultCodexModel for Codex).
	Provider string
	Model    string
	FailGate bool   // the gate answers 503 instead of the secret
	Fault    string // fixture fault mode, passed in the bootstrap JSON; or a model fault (model.Faults, with ProviderCLI)
	// Serialization is the Effect RPC serialization the server speaks, "json"
	// (the default) or "ndjson". Effect servers have it in their configuration,
	// not negotiated: the driver's socket uses it, and the embedded fixture
	// server is told it in the bootstrap JSON ("serialization"). A real server
	// (ServerCmd) must be configured to match.
	Serialization string
	OutDir        string // evidence directory; empty: a new directory under the system temp dir
	Iteration     int    // the iteration number of this run within a suite (names the files)

	// Redact lists secrets replaced by [REDACTED] wherever they occur in the
	// recording, in every spelling the recorder knows (docs/redaction.md),
	// as `wireproof record --redact` does. Besides them a run always redacts
	// the values of its environment's credential variables
	// (CredentialEnv), which the server inherits and may log.
	Redact []string

	// Stdout receives the plain progress lines; Status, if set, receives the
	// live status line (a terminal). Nil means io.Discard.
	Stdout io.Writer
	Status io.Writer
	// KeepWorkspace keeps the run's server home (its SQLite database and
	// logs) and git project as <scenario>-<n>.work in the output directory,
	// instead of removing them when the run ends.
	KeepWorkspace bool
	// RepoDir is the repository whose revision, dirty state and patch the
	// manifest records; empty means the current directory. Outside a
	// repository nothing is recorded.
	RepoDir string
	// KeepPatch keeps the working tree's uncommitted changes (`git diff
	// --binary HEAD`) as the working-tree.patch artifact of a dirty
	// repository. Off by default: a diff can hold anything, an uncommitted
	// API key among it. A kept patch is redacted like a body, and whatever
	// looks like a credential in it (internal/credscan) is replaced too.
	KeepPatch bool
	// Hooks are called as the run progresses; nil means none.
	Hooks *Hooks
	// Executable is the wireproof binary used for the embedded fixture server,
	// the scripted provider and suite children; empty means os.Executable().
	Executable string
	// ScriptedProvider puts an executable `claude` that runs `wireproof
	// provider claude` first on the server's PATH, and writes its path as the
	// providers.claudeAgent.binaryPath setting into the server's fresh home,
	// so a real server (ServerCmd) runs its provider sessions against the
	// scripted provider and needs no credentials. The embedded fixture
	// server always starts the scripted provider itself. Whatever the
	// setting, every scripted provider process of the run streams its stdio
	// into the bundle and sends its MCP requests through the recording proxy.
	ScriptedProvider bool
	// ProviderCLI is the path of the real Claude Code CLI, or of the Codex
	// CLI (told apart by --version), the server's provider sessions run,
	// through `wireproof provider wrap` (given to the server the way
	// ScriptedProvider gives it the scripted provider, as its
	// providers.<driver> settings, and started by the embedded fixture
	// server as T3's adapters start them). Its model is the scripted model
	// (package model: the Messages API for Claude, the Responses API for
	// Codex) behind a recording proxy, its API key a random one of the run,
	// its home a private directory of the run. The bundle holds every side:
	// the client's, the CLI's stdio, its MCP requests and its model calls.
	// Empty: no real CLI. It excludes ScriptedProvider.
	ProviderCLI string
	// ModelCassette, with ProviderCLI, answers the CLI's model calls from
	// the model calls recorded in these bundles (a directory: its *.zst)
	// instead of the scripted model (package model/cassette): a call that
	// matches none is answered with an API error and fails the check
	// model-cassette-miss. ModelFast plays the recorded answers at once
	// instead of at their recorded pace.
	ModelCassette []string
	ModelFast     bool
	// ModelUpstream, with ProviderCLI, sends the CLI's model calls through
	// the recording proxy to this Messages API (http or https; a real
	// model) instead of the scripted model. The CLI's key is then the
	// caller's ANTHROPIC_API_KEY when set (redacted like the run's own).
	// ModelCA is a PEM file of certificates to trust for it besides the
	// system's (a private CA, a test server's).
	ModelUpstream string
	ModelCA       string
	// RealModel, with ProviderCLI and no ModelUpstream, records against
	// the real model the user's CLI would talk to: ModelUpstream is then
	// $ANTHROPIC_BASE_URL when set, else PublicModelAPI
	// (DefaultModelUpstream).
	RealModel bool

	// What withDefaults learned: the provider's driver (DriverClaude,
	// DriverCodex: ProviderCLI's, else Provider's when it is a built-in
	// instance; "" for another instance id) and what ProviderCLI's
	// --version printed.
	driver, cliVersion string
}

// OptionError is a bad option value; the CLI maps it to a usage error.
type OptionError struct {
	Option string
	Value  string
	Want   string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Option, e.Value, e.Want)
}

// OutputError is an output that could not be written: the output directory,
// a bundle, a verdict file or results.json. Path is the file or directory the
// user's options name; Err says why. The CLI gives it its own exit code.
type OutputError struct {
	Path string
	Err  error
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("cannot write %s: %v", e.Path, e.Err)
}

func (e *OutputError) Unwrap() error { return e.Err }

// outputErr wraps err, if any, as an *OutputError about path.
func outputErr(path string, err error) error {
	if err == nil {
		return nil
	}
	return &OutputError{Path: path, Err: err}
}

// withDefaults returns a copy of o with defaults filled in, or the first bad
// value.
func (o Options) withDefaults() (Options, error) {
	if o.Scenario == "" {
		o.Scenario = ScenarioAll
	}
	if o.Scenario != ScenarioAll && !o.Scenario.Known() {
		return o, &OptionError{"--scenario", string(o.Scenario), "want all, idle, active, native or nested"}
	}
	if o.Repeat == 0 {
		o.Repeat = 1
	}
	if o.Repeat < 0 {
		return o, &OptionError{"--repeat", fmt.Sprint(o.Repeat), "want a positive integer"}
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Timeout < 0 {
		return o, &OptionError{"--timeout", fmt.Sprint(o.Timeout.Seconds()), "want positive seconds"}
	}
	switch o.Serialization {
	case "":
		o.Serialization = "json"
	case "json", "ndjson":
	default:
		return o, &OptionError{"--serialization", o.Serialization, "want json or ndjson"}
	}
	if strings.TrimSpace(o.ServerCmd) != "" {
		if err := checkServerCmd(o.ServerCmd); err != nil {
			return o, err
		}
	}
	if isModelFault(o.Fault) && o.ProviderCLI == "" {
		return o, &OptionError{"--fault", o.Fault, "a model fault needs the real CLI (--provider-cli): only it talks to the scripted model"}
	}
	if len(o.ModelCassette) > 0 {
		switch {
		case o.ProviderCLI == "":
			return o, &OptionError{"--model-cassette", strings.Join(o.ModelCassette, ","), "a model cassette needs the real CLI (--provider-cli): only it talks to the model"}
		case isModelFault(o.Fault):
			return o, &OptionError{"--fault", o.Fault, "a model fault and --model-cassette cannot be combined: the cassette plays what was recorded, faults included"}
		}
		for _, p := range o.ModelCassette {
			if _, err := os.Stat(p); err != nil {
				return o, &OptionError{"--model-cassette", p, "a bundle or a directory of bundles: " + err.Error()}
			}
		}
	}
	o, err := resolveModelUpstream(o, os.Getenv)
	if err != nil {
		return o, err
	}
	if o.ProviderCLI != "" {
		if o.ScriptedProvider {
			return o, &OptionError{"--provider-cli", o.ProviderCLI, "it replaces --scripted-provider: give one of them"}
		}
		if err := checkProviderCLI(o.ProviderCLI); err != nil {
			return o, err
		}
		if o.cliVersion, o.driver, err = probeCLI(context.Background(), o.ProviderCLI); err != nil {
			return o, err
		}
		if o, err = checkProviderDriver(o); err != nil {
			return o, err
		}
	}
	if o.Provider == "" {
		o.Provider = DefaultProvider
	}
	if o.driver == "" && (o.Provider == DriverClaude || o.Provider == DriverCodex) {
		// A built-in instance: its id is its driver's. Another instance id
		// (a server's own instance) names no driver wireproof knows.
		o.driver = o.Provider
	}
	if o.driver == DriverCodex && o.ProviderCLI == "" && (strings.TrimSpace(o.ServerCmd) == "" || o.ScriptedProvider) {
		return o, &OptionError{"--provider", o.Provider, "Codex needs the real Codex CLI: give --provider-cli PATH (e.g. \"$(command -v codex)\"); there is no scripted Codex provider"}
	}
	if o.Model == "" {
		o.Model = DefaultModel
		if o.driver == DriverCodex {
			o.Model = DefaultCodexModel
		}
	}
	if o.Iteration == 0 {
		o.Iteration = 1
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	return o, nil
}

// Suite reports whether the options ask for more than one run.
func (o Options) Suite() bool { return o.Scenario == ScenarioAll || o.Repeat > 1 }

// Hooks let a caller follow a run as it happens (tests use them to act at a
// given moment, for example to kill the server mid-run). They are called on the
// driver goroutine and must not block.
type Hooks struct {
	// ServerStarted is called with the pid of each server process started.
	ServerStarted func(pid int)
	// Phase is called when the driver enters a phase (replay.Phase*).
	Phase func(phase replay.Phase)
	// Secret is called with every credential of the run as it becomes known
	// (the bootstrap token, the access token, the WebSocket ticket), all of
	// which the bundle must hold only as [REDACTED].
	Secret func(secret string)
}
