package verify_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/verify"
)

// claudeCLI is the real Claude Code CLI these tests run: the one
// testkit.EnvClaudeCLI names (CI: the pinned one .ci/run installs; then
// it must work), else interop/claude-cli's node_modules. Without one the
// test skips, or fails under testkit.EnvNodeRequired.
func claudeCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(testkit.EnvClaudeCLI); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			t.Fatalf("%s=%s is not the Claude Code CLI: %v", testkit.EnvClaudeCLI, p, err)
		}
		return p
	}
	p, _ := filepath.Abs("../interop/claude-cli/node_modules/@anthropic-ai/claude-code/bin/claude.exe")
	if _, err := os.Stat(p); err != nil {
		testkit.Missing(t, testkit.EnvNodeRequired, "skipping the real Claude Code CLI tests: set "+testkit.EnvClaudeCLI+
			" to its path, or install the pinned one (cd interop/claude-cli && npm ci)")
	}
	return p
}

// cliTimeout bounds a real-CLI run: the CLI takes a second or two to start,
// each scenario starts two or three of them, and the machine may be loaded.
const cliTimeout = 180 * time.Second

// sides counts what a real-CLI bundle holds of each side of the run.
type sides struct {
	client    int // the driver's WebSocket messages
	providers map[string]*providerChannel
	stderr    int      // the CLIs' stderr lines
	exec      []string // what each wrapper ran (the MCP URL through the proxy)
	mcp       int      // HTTP requests to /mcp through the proxy
	mcpCalls  []string // the tools/call names
	model     int      // model calls through the model proxy
}

func bundleSides(t *testing.T, events []bundle.Event) sides {
	t.Helper()
	s := sides{providers: providerChannels(t, events)}
	mcpConns := map[string]bool{}
	for _, ev := range events {
		switch {
		case ev.Kind == bundle.KindWSMessage:
			s.client++
		case ev.Kind == bundle.KindProcLog && strings.HasPrefix(ev.Conn, "provider-"):
			s.stderr++
		case ev.Kind == bundle.KindProcStart && strings.HasPrefix(ev.Conn, "provider-"):
			var a struct {
				Exec []string `json:"exec"`
			}
			_ = json.Unmarshal(ev.Attrs, &a)
			s.exec = append(s.exec, strings.Join(a.Exec, " "))
		case ev.Kind == bundle.KindHTTPRequest && strings.HasPrefix(ev.Conn, "model-"):
			if ev.Method == "POST" && strings.HasPrefix(ev.URL, "/v1/messages") {
				s.model++
			}
		case ev.Kind == bundle.KindHTTPRequest && strings.HasPrefix(ev.URL, "/mcp"):
			s.mcp++
			mcpConns[ev.Conn] = true
		case ev.Kind == bundle.KindHTTPBody && mcpConns[ev.Conn] && ev.Dir == bundle.DirClientToServer:
			var m struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(ev.Body.Data, &m) == nil && m.Method == "tools/call" {
				s.mcpCalls = append(s.mcpCalls, m.Params.Name)
			}
		}
	}
	return s
}

// TestProviderCLIScenarios runs every scenario with the real Claude Code
// CLI against the embedded fixture server and the scripted model: each
// passes live, replays to the same verdict (runOnce), and its bundle holds
// all four sides, the client's traffic, each CLI's argv, stdio and exit,
// its MCP calls through the recording proxy and its model calls through
// the model's; the run's API key is in no file of the output.
func TestProviderCLIScenarios(t *testing.T) {
	cli := claudeCLI(t)
	wantCLIs := map[assert.Scenario]int{assert.ScenarioIdle: 2, assert.ScenarioActive: 2, assert.ScenarioNative: 1, assert.ScenarioNested: 3}
	for _, sc := range verify.Scenarios {
		t.Run(string(sc), func(t *testing.T) {
			res, out, key := runKept(t, sc, cli, "sk-ant-")
			if f := res.Verdict.Failure; f != nil {
				t.Fatalf("%s failed: %s (%s) @%d: expected %s, seen %s", sc, f.Check, f.Message, f.Seq, f.Expected, f.Seen)
			}
			hdr, events := readBundle(t, res.Bundle)
			if v := hdr.Manifest.Options["providerCliVersion"]; !strings.Contains(v, "Claude Code") {
				t.Errorf("manifest providerCliVersion %q", v)
			}
			s := bundleSides(t, events)
			if s.client == 0 {
				t.Error("no client traffic recorded")
			}
			if len(s.providers) != wantCLIs[sc] {
				t.Errorf("%d CLI processes recorded, want %d", len(s.providers), wantCLIs[sc])
			}
			for name, c := range s.providers {
				if len(c.argv) == 0 || c.argv[0] != cli || !strings.Contains(strings.Join(c.argv, " "), "[REDACTED]") {
					t.Errorf("%s argv %q: want the CLI's, its bearer token redacted", name, c.argv)
				}
				if c.in == 0 || c.out == 0 || !c.exited {
					t.Errorf("%s: %d stdin and %d stdout lines, exited %v", name, c.in, c.out, c.exited)
				}
			}
			for _, e := range s.exec {
				if !strings.Contains(e, "--mcp-config") || strings.Contains(e, hdr.Manifest.Options["port"]+"/mcp") {
					t.Errorf("the wrapper ran %q: want the MCP URL through the recording proxy, not the server's port", e)
				}
			}
			// Every CLI connects to the server's MCP endpoint; all but native's
			// delegate through it.
			delegates := len(s.mcpCalls) > 0 && s.mcpCalls[0] == "delegate_task"
			if s.mcp == 0 || delegates != (sc != assert.ScenarioNative) {
				t.Errorf("%d MCP requests, tool calls %q", s.mcp, s.mcpCalls)
			}
			if s.model < 2 {
				t.Errorf("%d model calls recorded", s.model)
			}
			if key == "" {
				t.Fatal("the run reported no API key")
			}
			// The key is in no file of the output, in any spelling: the
			// bundle's is checked by runOnce; the verdict and the kept
			// workspace, the CLI's home among it, here.
			if _, err := os.Stat(filepath.Join(res.Workspace, "provider-home", ".claude")); err != nil {
				t.Errorf("the CLI's private home: %v", err)
			}
			if homeFiles := checkOutputFiles(t, out, key); homeFiles == 0 {
				t.Error("no file of the CLI's home was searched")
			}
		})
	}
}

// runKept runs scenario sc on the real CLI (runOnce) with the workspace
// kept, so that the CLI's private home (its config, transcripts and
// temporary files) can be searched too, and returns the result, the output
// directory and the run's model key: the secret it reported that begins
// with keyPrefix.
func runKept(t *testing.T, sc assert.Scenario, cli, keyPrefix string) (res *verify.Result, out, key string) {
	t.Helper()
	out = filepath.Join(t.TempDir(), "out")
	res = runOnce(t, verify.Options{Scenario: sc, ProviderCLI: cli, Timeout: cliTimeout, OutDir: out, KeepWorkspace: true,
		Hooks: &verify.Hooks{Secret: func(s string) {
			if strings.HasPrefix(s, keyPrefix) {
				key = s
			}
		}}})
	return res, out, key
}

// checkOutputFiles searches every file of an output directory but the
// bundles (runOnce searches those) for secret in every spelling, and
// returns how many of them were in the CLI's home (provider-home).
func checkOutputFiles(t *testing.T, out, secret string) (homeFiles int) {
	t.Helper()
	_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".zst") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return nil
		}
		checkSecretSpellings(t, b, secret)
		if strings.Contains(path, "provider-home") {
			homeFiles++
		}
		return nil
	})
	return homeFiles
}

// TestProviderCLIServerCmd: a server given as --server-cmd finds the real
// CLI's wrapper as its claude through the binaryPath setting written into
// its home, as a real T3 server does, and the run passes on the real CLI.
func TestProviderCLIServerCmd(t *testing.T) {
	cli := claudeCLI(t)
	res := runOnce(t, verify.Options{Scenario: assert.ScenarioIdle, ServerCmd: wireproofBin + " fixture", ProviderCLI: cli, Timeout: cliTimeout})
	if f := res.Verdict.Failure; f != nil {
		t.Fatalf("failed: %s (%s) @%d: expected %s, seen %s", f.Check, f.Message, f.Seq, f.Expected, f.Seen)
	}
	_, events := readBundle(t, res.Bundle)
	if !logged(events, "claudeAgent provider from settings", "/bin/claude") {
		t.Error("the server did not start its provider from the binaryPath setting")
	}
	s := bundleSides(t, events)
	for name, c := range s.providers {
		if len(c.argv) == 0 || c.argv[0] != cli {
			t.Errorf("%s argv %q: want the real CLI's", name, c.argv)
		}
	}
	if len(s.providers) != 2 || s.model == 0 {
		t.Errorf("%d CLI processes and %d model calls recorded, want 2 and some", len(s.providers), s.model)
	}
}

// TestProviderCLIModelFault: a model fault, played by the scripted model to
// the real CLI, fails the run live with the check it names (the CLI answers
// the unknown tool with an error result and the run goes on, so only that
// check fails), and replay reaches the same verdict (runOnce).
func TestProviderCLIModelFault(t *testing.T) {
	cli := claudeCLI(t)
	fault := model.FaultUnknownTool
	runModelFault(t, cli, fault)
}

// runModelFault runs idle on the real CLI with a model fault and requires
// the check the fault names to fail it, and nothing else.
func runModelFault(t *testing.T, cli, fault string) {
	t.Helper()
	res := runOnce(t, verify.Options{Scenario: assert.ScenarioIdle, ProviderCLI: cli, Fault: fault, Timeout: cliTimeout})
	f := res.Verdict.Failure
	if f == nil || f.Check != model.FaultChecks[fault] {
		t.Fatalf("fault %s: failure %+v, want check %s", fault, f, model.FaultChecks[fault])
	}
	for _, s := range res.Verdict.Suites {
		if s.Status != assert.StatusPassed && (s.Failure == nil || s.Failure.Check != model.FaultChecks[fault]) {
			t.Errorf("suite %s %s with %+v: want only %s to fail", s.Suite, s.Status, s.Failure, model.FaultChecks[fault])
		}
	}
}

// TestProviderCLIOptions: a path that is not a runnable CLI, the real CLI
// with the scripted provider, a model fault without the real CLI, a
// --provider that is not the CLI's, Codex without its CLI and a Codex CLI
// with a Messages API cassette are option errors before anything starts.
func TestProviderCLIOptions(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notExec := script("claude", "", 0o644)
	fails := script("fails", "echo no such thing >&2\nexit 3\n", 0o755)
	silent := script("silent", "exit 0\n", 0o755)
	other := script("other", "echo '1.0.2 (Other CLI)'\n", 0o755)
	fakeClaude := script("fake-claude", "echo '2.1.328 (Claude Code)'\n", 0o755)
	fakeCodex := script("fake-codex", "echo 'codex-cli 0.169.0'\n", 0o755)
	for _, tc := range []struct {
		name string
		opts verify.Options
		want string
	}{
		{"version empty", verify.Options{ProviderCLI: silent}, "not the Claude Code CLI nor the Codex CLI: `--version` printed \"\""},
		{"/bin/true", verify.Options{ProviderCLI: "/bin/true"}, `invalid --provider-cli "/bin/true": not the Claude Code CLI nor the Codex CLI`},
		{"version of another program", verify.Options{ProviderCLI: other}, `printed "1.0.2 (Other CLI)"`},
		{"missing", verify.Options{ProviderCLI: filepath.Join(dir, "nope")}, "no such file"},
		{"directory", verify.Options{ProviderCLI: dir}, "directory"},
		{"not executable", verify.Options{ProviderCLI: notExec}, "not executable"},
		{"version fails", verify.Options{ProviderCLI: fails}, "no such thing"},
		{"with the scripted provider", verify.Options{ProviderCLI: fails, ScriptedProvider: true}, "--scripted-provider"},
		{"model fault alone", verify.Options{Fault: model.FaultOverloaded}, "--provider-cli"},
		{"the Codex CLI as claudeAgent", verify.Options{ProviderCLI: fakeCodex, Provider: verify.DriverClaude},
			`invalid --provider "claudeAgent": --provider-cli ` + fakeCodex + ` is the Codex CLI (codex-cli 0.169.0), whose provider is codex: give --provider codex, or the CLI of provider claudeAgent`},
		{"the Claude Code CLI as codex", verify.Options{ProviderCLI: fakeClaude, Provider: verify.DriverCodex},
			`invalid --provider "codex": --provider-cli ` + fakeClaude + ` is the Claude Code CLI (2.1.328 (Claude Code)), whose provider is claudeAgent: give --provider claudeAgent`},
		{"codex without its CLI", verify.Options{Provider: verify.DriverCodex}, `invalid --provider "codex": Codex needs the real Codex CLI: give --provider-cli PATH`},
		{"codex with the scripted provider", verify.Options{Provider: verify.DriverCodex, ServerCmd: "/bin/true", ScriptedProvider: true}, "there is no scripted Codex provider"},
		{"the Codex CLI with --real-model", verify.Options{ProviderCLI: fakeCodex, RealModel: true}, "the Codex CLI's real model has no default here: give --model-upstream URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Scenario, tc.opts.OutDir, tc.opts.Executable = assert.ScenarioIdle, filepath.Join(t.TempDir(), "out"), wireproofBin
			t.Setenv("TMPDIR", t.TempDir())
			_, err := verify.Run(t.Context(), tc.opts)
			var oe *verify.OptionError
			if !errors.As(err, &oe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an OptionError saying %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(tc.opts.OutDir, "idle-1.zst")); err == nil {
				t.Error("a bundle was written for a run that could not start")
			}
		})
	}
}
