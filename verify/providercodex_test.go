package verify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/provider/cliwrap"
	"github.com/wireproof/wireproof/verify"
)

// codexThreadStarts are the thread/start lines the server wrote to its
// Codex app-servers, as recorded, and the channels they went to.
func codexThreadStarts(events []bundle.Event) (lines []string, conns map[string]bool) {
	conns = map[string]bool{}
	for _, ev := range events {
		if ev.Kind == bundle.KindStdioLine && strings.HasPrefix(ev.Conn, "provider-") && ev.Dir == bundle.DirClientToServer &&
			strings.Contains(string(ev.Body.Data), `"method":"thread/start"`) {
			lines = append(lines, string(ev.Body.Data))
			conns[ev.Conn] = true
		}
	}
	return lines, conns
}

// responsesCalls counts the model calls of the Responses API in a bundle.
func responsesCalls(events []bundle.Event) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == bundle.KindHTTPRequest && strings.HasPrefix(ev.Conn, "model-") && ev.Method == "POST" && ev.URL == "/v1/responses" {
			n++
		}
	}
	return n
}

// TestProviderCodexScenarios runs every scenario with the real Codex CLI
// (--provider-cli alone: the provider is the CLI's, codex) against the
// embedded fixture server's Codex provider and the scripted Responses API.
// All four pass live and replay to the same verdict (runOnce); native is
// judged on the server's delivery of the background command Codex ran (the
// Codex CLI starts no turn of its own). A bundle holds all sides: the client's
// traffic, each `codex app-server`'s argv, stdio and exit, its MCP calls
// through the recording proxy (the URL thread/start gave it rewritten, its
// bearer token redacted) and its model calls; the run's key is in no file
// of the output, the CLI's private CODEX_HOME included.
func TestProviderCodexScenarios(t *testing.T) {
	cli := testkit.CodexCLI(t, "..")
	for _, sc := range verify.Scenarios {
		t.Run(string(sc), func(t *testing.T) {
			res, out, key := runKept(t, sc, cli, "sk-wireproof-codex-")
			hdr, events := readBundle(t, res.Bundle)
			if hdr.Manifest.Provider != verify.DriverCodex || hdr.Manifest.Model != verify.DefaultCodexModel {
				t.Errorf("manifest provider %q model %q, want %s and %s", hdr.Manifest.Provider, hdr.Manifest.Model, verify.DriverCodex, verify.DefaultCodexModel)
			}
			opts := hdr.Manifest.Options
			if opts["providerDriver"] != verify.DriverCodex || !strings.HasPrefix(opts["providerCliVersion"], "codex-cli ") {
				t.Errorf("manifest providerDriver %q providerCliVersion %q", opts["providerDriver"], opts["providerCliVersion"])
			}
			if key == "" {
				t.Fatal("the run reported no Codex key")
			}
			if f := res.Verdict.Failure; f != nil || res.Verdict.Status != assert.StatusPassed {
				t.Fatalf("%s %s: %+v", sc, res.Verdict.Status, f)
			}
			s := bundleSides(t, events)
			if s.client == 0 || len(s.providers) == 0 {
				t.Fatalf("%d client messages, %d provider processes recorded", s.client, len(s.providers))
			}
			starts, sessions := codexThreadStarts(events)
			if len(starts) == 0 {
				t.Fatal("no thread/start recorded")
			}
			// Every app-server is recorded from its argv to its exit; a
			// session's (not a status probe the server stopped at once)
			// both ways.
			for name, c := range s.providers {
				if len(c.argv) < 2 || c.argv[0] != cli || !strings.Contains(strings.Join(c.argv[1:], " "), "app-server") {
					t.Errorf("%s argv %q: want the Codex CLI's app-server", name, c.argv)
				}
				if c.in == 0 || !c.exited || (sessions[name] && c.out == 0) {
					t.Errorf("%s: %d stdin and %d stdout lines, exited %v", name, c.in, c.out, c.exited)
				}
			}
			for _, l := range starts {
				if strings.Contains(l, `"mcp_servers"`) && !strings.Contains(l, `"Authorization":"[REDACTED]"`) {
					t.Errorf("thread/start as recorded: %s\nwant its MCP bearer token redacted", l)
				}
			}
			if !strings.Contains(starts[0], `"mcp_servers"`) {
				t.Errorf("the first thread/start names no MCP server: %s", starts[0])
			}
			switch {
			case sc == assert.ScenarioNative && len(s.mcpCalls) != 0:
				t.Errorf("native called the MCP tools %q: want the background command alone", s.mcpCalls)
			case sc != assert.ScenarioNative && (s.mcp == 0 || len(s.mcpCalls) == 0 || s.mcpCalls[0] != "delegate_task"):
				t.Errorf("%d MCP requests through the recording proxy, tool calls %q: want delegate_task first", s.mcp, s.mcpCalls)
			}
			if n := responsesCalls(events); n < 2 {
				t.Errorf("%d Responses API calls recorded", n)
			}
			// The CLI's private home: the config naming the scripted model,
			// and no key in it or in any other file of the output.
			cfg, err := os.ReadFile(filepath.Join(cliwrap.CodexHome(filepath.Join(res.Workspace, "provider-home")), "config.toml"))
			if err != nil || !strings.Contains(string(cfg), `wire_api = "responses"`) || !strings.Contains(string(cfg), verify.CodexKeyEnv) {
				t.Errorf("the CLI's config.toml: %v\n%s", err, cfg)
			}
			if homeFiles := checkOutputFiles(t, out, key); homeFiles < 2 {
				t.Errorf("%d files of the CLI's home searched, want its config and its sessions", homeFiles)
			}
		})
	}
}

// TestProviderCodexServerCmd: a server given as --server-cmd finds the
// Codex CLI's wrapper through the providers.codex settings written into its
// home (binaryPath and homePath, as T3 reads them), and the run passes on
// the real CLI; --provider codex is given, as the reference verifier's flag.
func TestProviderCodexServerCmd(t *testing.T) {
	cli := testkit.CodexCLI(t, "..")
	res := runOnce(t, verify.Options{Scenario: assert.ScenarioIdle, ServerCmd: wireproofBin + " fixture", Provider: verify.DriverCodex, ProviderCLI: cli, Timeout: cliTimeout})
	if f := res.Verdict.Failure; f != nil {
		t.Fatalf("failed: %s (%s) @%d: expected %s, seen %s", f.Check, f.Message, f.Seq, f.Expected, f.Seen)
	}
	_, events := readBundle(t, res.Bundle)
	if !logged(events, "codex provider from settings", "/bin/codex") {
		t.Error("the server did not take its Codex from the providers.codex settings")
	}
	s := bundleSides(t, events)
	if len(s.providers) == 0 || responsesCalls(events) == 0 {
		t.Errorf("%d CLI processes and %d model calls recorded", len(s.providers), responsesCalls(events))
	}
	for name, c := range s.providers {
		if len(c.argv) == 0 || c.argv[0] != cli {
			t.Errorf("%s argv %q: want the real CLI's", name, c.argv)
		}
	}
}

// TestProviderCodexModelFaults: each model fault, played by the scripted
// Responses API to the real Codex CLI, fails the run live with the check
// it names and nothing else (Codex goes on after it, and the delivery
// passes), and replay reaches the same verdict (runOnce).
func TestProviderCodexModelFaults(t *testing.T) {
	cli := testkit.CodexCLI(t, "..")
	for _, fault := range model.Faults {
		t.Run(fault, func(t *testing.T) { runModelFault(t, cli, fault) })
	}
}

// TestProviderCodexEnvironment: what the Codex CLI's process gets, seen
// by a stand-in that answers --version as Codex does and writes its
// environment to stderr (recorded as the provider channel's proc.log): the
// private CODEX_HOME and HOME, the run's key in CodexKeyEnv (redacted), and
// none of the caller's OpenAI or Codex settings. The stand-in exits at
// once, so the run fails; only the environment is judged.
func TestProviderCodexEnvironment(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "codex")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'codex-cli 0.169.0'; exit 0; fi\n" +
		"env | grep -E '^(HOME|CODEX_HOME|OPENAI_[A-Z_]*|CODEX_API_KEY|T3CODE_CODEX_LAUNCH_ARGS|" + verify.CodexKeyEnv + ")=' | sed 's/^/env /' >&2\nexit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-users-own-openai-key")
	t.Setenv("OPENAI_BASE_URL", "https://users-own.example")
	t.Setenv("CODEX_API_KEY", "users-own-codex-key")
	t.Setenv("CODEX_HOME", filepath.Join(dir, "users-own-codex-home"))
	t.Setenv("T3CODE_CODEX_LAUNCH_ARGS", "-c model_provider=users-own")
	res := runOnce(t, verify.Options{Scenario: assert.ScenarioIdle, ProviderCLI: fake, Timeout: 20 * time.Second})
	_, events := readBundle(t, res.Bundle)
	env := map[string]string{}
	for _, ev := range events {
		if ev.Kind == bundle.KindProcLog && strings.HasPrefix(ev.Conn, "provider-") {
			if kv, ok := strings.CutPrefix(string(ev.Body.Data), "env "); ok {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
		}
		if strings.Contains(string(ev.Body.Data), "users-own") || strings.Contains(string(ev.Attrs), "users-own") {
			t.Errorf("@%d %s %s holds the caller's own settings: %.200s", ev.Seq, ev.Kind, ev.Conn, ev.Body.Data)
		}
	}
	home := env["HOME"]
	want := map[string]string{"HOME": home, "CODEX_HOME": cliwrap.CodexHome(home), verify.CodexKeyEnv: "[REDACTED]"}
	if diff := cmp.Diff(want, env); diff != "" || !strings.HasSuffix(home, "/provider-home") {
		t.Errorf("the Codex CLI's environment (-want +got):\n%s", diff)
	}
}

// TestProviderCodexSettings: what the server is given for the Codex CLI,
// read back from a kept workspace: the codex shim running `wireproof
// provider wrap CLI`, and the providers.codex settings naming it and the
// private CODEX_HOME (its config.toml is written once the model is up:
// TestProviderCodexScenarios reads it), from a native run, which passes.
func TestProviderCodexSettings(t *testing.T) {
	cli := testkit.CodexCLI(t, "..")
	res := runOnce(t, verify.Options{Scenario: assert.ScenarioNative, ProviderCLI: cli, Timeout: cliTimeout, KeepWorkspace: true})
	if res.Verdict.Status != assert.StatusPassed {
		t.Fatalf("native on Codex: %s %+v, want %s", res.Verdict.Status, res.Verdict.Failure, assert.StatusPassed)
	}
	var settings struct {
		Providers struct {
			Codex  map[string]string `json:"codex"`
			Claude map[string]any    `json:"claudeAgent"`
		} `json:"providers"`
	}
	b, err := os.ReadFile(filepath.Join(res.Workspace, "home", "userdata", "settings.json"))
	if err != nil || json.Unmarshal(b, &settings) != nil {
		t.Fatalf("settings: %v\n%s", err, b)
	}
	codex := settings.Providers.Codex
	home := cliwrap.CodexHome(filepath.Join(res.Workspace, "provider-home"))
	if codex["homePath"] != home || codex["binaryPath"] != filepath.Join(res.Workspace, "bin", "codex") {
		t.Errorf("settings %s: want providers.codex with binaryPath <work>/bin/codex and homePath %s", b, home)
	}
	// The user's own claude is not started beside it.
	if diff := cmp.Diff(map[string]any{"enabled": false}, settings.Providers.Claude); diff != "" {
		t.Errorf("providers.claudeAgent (-want +got):\n%s", diff)
	}
	shim, err := os.ReadFile(codex["binaryPath"])
	if err != nil || !strings.Contains(string(shim), " provider wrap '"+cli+"' \"$@\"") {
		t.Errorf("the codex shim: %v\n%s", err, shim)
	}
}
