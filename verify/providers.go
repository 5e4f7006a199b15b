package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/provider/claude"
	"github.com/wireproof/wireproof/provider/cliwrap"
	"github.com/wireproof/wireproof/record"
)

// Provider processes are evidence. The server starts them (a real server
// through the Claude Agent SDK, the fixture server itself), so the driver
// cannot tap their pipes; instead every scripted provider streams its argv
// and its stdin and stdout lines to the tap endpoint below (claude.EnvTap),
// which records them as one channel per process: proc.start with the argv
// (credentials redacted), stdio.line per stdin and stdout line, proc.log per
// stderr line (the real CLI's wrapper sends them), proc.exit. Its MCP requests
// reach the server through the recording proxy (claude.EnvMCPProxy). The
// variables reach the providers through the server's environment.

// providerConnPrefix names the channels: provider-1, provider-2, ...
const providerConnPrefix = "provider-"

// providerTap is the loopback endpoint provider processes stream to.
type providerTap struct {
	rec   *record.Recorder
	learn func(secret string) // a credential found in a provider's argv
	ln    net.Listener
	srv   *http.Server
	n     atomic.Int64
	wg    sync.WaitGroup
}

func startProviderTap(rec *record.Recorder, learn func(string)) (*providerTap, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for provider processes: %w", err)
	}
	t := &providerTap{rec: rec, learn: learn, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /stdio", t.serve)
	t.srv = &http.Server{Handler: mux}
	t.wg.Go(func() { _ = t.srv.Serve(ln) })
	return t, nil
}

// URL is the value of claude.EnvTap.
func (t *providerTap) URL() string { return "http://" + t.ln.Addr().String() + "/stdio" }

// close waits for the streams still open (their processes are being
// stopped with the server) until ctx ends, then cuts them.
func (t *providerTap) close(ctx context.Context) {
	if err := t.srv.Shutdown(ctx); err != nil {
		t.srv.Close()
	}
	t.wg.Wait()
}

func (t *providerTap) serve(w http.ResponseWriter, r *http.Request) {
	name := fmt.Sprintf("%s%d", providerConnPrefix, t.n.Add(1))
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<34))
	var first claude.TapFrame
	if err := dec.Decode(&first); err != nil || len(first.Argv) == 0 {
		http.Error(w, "the first frame must carry argv", http.StatusBadRequest)
		return
	}
	for _, s := range providerCredentials(first.Argv) {
		t.learn(s)
	}
	attrs, _ := json.Marshal(struct {
		Argv []string `json:"argv"`
		Exec []string `json:"exec,omitempty"` // what a wrapper ran instead (the MCP URL through the proxy)
		Pid  int      `json:"pid"`
	}{first.Argv, first.Exec, first.Pid})
	t.emit(&bundle.Event{Kind: bundle.KindProcStart, Conn: name, Attrs: attrs})
	in := record.TapWriter(t.rec, name, bundle.DirClientToServer, io.Discard)
	out := record.TapWriter(t.rec, name, bundle.DirServerToClient, io.Discard)
	exit := &bundle.Event{Kind: bundle.KindProcExit, Conn: name, Code: -1}
	for {
		var f claude.TapFrame
		err := dec.Decode(&f)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				exit.Err = "the provider's stream broke off: " + err.Error()
			} else {
				exit.Err = "the provider's stream ended without an exit status"
			}
			break
		}
		if f.Exit != nil {
			exit.Code, exit.Name = *f.Exit, f.Signal
			break
		}
		switch f.Dir {
		case claude.TapIn:
			for _, s := range stdinCredentials(f.Line) {
				t.learn(s)
			}
			io.WriteString(in, f.Line+"\n")
		case claude.TapOut:
			io.WriteString(out, f.Line+"\n")
		case claude.TapErr:
			t.emit(&bundle.Event{Kind: bundle.KindProcLog, Conn: name, Type: bundle.TypeStderr, Body: bundle.Text([]byte(f.Line))})
		}
	}
	in.Close()
	out.Close()
	t.emit(exit)
	w.WriteHeader(http.StatusNoContent)
}

func (t *providerTap) emit(ev *bundle.Event) { _, _ = t.rec.Emit(ev) }

// providerCredentials are the secrets in a provider's argv: the header values
// of --mcp-config (the per-session bearer token), bare and with their scheme.
func providerCredentials(argv []string) []string {
	cfg, err := claude.ParseArgs(argv)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range cfg.MCPServers {
		out = append(out, headerSecrets(s.Headers)...)
	}
	return out
}

// stdinCredentials are the secrets in a line the server wrote to a
// provider's stdin: the header values of the MCP servers a Codex request
// configures (params.config.mcp_servers.*.http_headers, T3's per-session
// bearer token), bare and with their scheme.
func stdinCredentials(line string) []string {
	if !strings.Contains(line, `"http_headers"`) {
		return nil
	}
	var m struct {
		Params struct {
			Config struct {
				MCPServers map[string]struct {
					Headers map[string]string `json:"http_headers"`
				} `json:"mcp_servers"`
			} `json:"config"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(line), &m) != nil {
		return nil
	}
	var out []string
	for _, s := range m.Params.Config.MCPServers {
		out = append(out, headerSecrets(s.Headers)...)
	}
	return out
}

// headerSecrets are the values of headers (credentials), bare and, when
// they have a scheme ("Bearer tok"), without it.
func headerSecrets(h map[string]string) []string {
	var out []string
	for _, v := range h {
		out = append(out, v)
		if _, tok, ok := strings.Cut(v, " "); ok && tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

// providerEnv is the environment the server is started with: the caller's,
// with the tap and the proxy for provider processes, with the scripted
// provider or the real CLI's wrapper first on PATH when asked, and, for a
// real CLI, its variables (cli) in place of the caller's credentials.
func providerEnv(tapURL, proxyURL, upstream, shimDir string, cli []string) []string {
	env := os.Environ()
	if cli != nil {
		env = cliwrap.WithoutEnv(env, cliEnvDropped)
	}
	if shimDir != "" {
		env = append(env, "PATH="+shimDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	env = append(env, claude.EnvTap+"="+tapURL, claude.EnvMCPProxy+"="+proxyURL, claude.EnvMCPUpstream+"="+upstream)
	return append(env, cli...)
}

// installScriptedProvider writes an executable `claude` into dir that runs
// `wireproof provider claude` (this executable, by absolute path), and the
// binaryPath setting into the server's fresh home for servers that read it.
func installScriptedProvider(dir, home, exe string) error {
	return installClaude(dir, home, "#!/bin/sh\nexec "+shellQuote(exe)+" provider claude \"$@\"\n")
}

// installClaude writes script as the executable `claude` in dir, and its
// path as the providers.claudeAgent.binaryPath setting into the server's
// fresh home.
func installClaude(dir, home, script string) error {
	return installShim(dir, home, "claude", script, DriverClaude, nil)
}

// installCodex writes script as the executable `codex` in dir, and its
// path and the Codex CLI's home as the providers.codex binaryPath and
// homePath settings (T3 starts the CLI as `<binaryPath> app-server` with
// CODEX_HOME=<homePath>) into the server's fresh home.
func installCodex(dir, home, script, codexHome string) error {
	return installShim(dir, home, "codex", script, DriverCodex, map[string]string{"homePath": codexHome})
}

// installShim writes script as the executable name in dir, and the
// providers.<driver> settings (binaryPath: the executable, and more) into
// <home>/userdata/settings.json. The other driver is disabled there
// (enabled: false), so a real server does not start the user's own CLI of
// it (T3 probes every enabled provider at start: `claude` or `codex` on its
// PATH, with the user's home and credentials).
func installShim(dir, home, name, script, driver string, more map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	shim := filepath.Join(dir, name)
	if err := os.WriteFile(shim, []byte(script), 0o755); err != nil {
		return fmt.Errorf("writing the server's %s: %w", name, err)
	}
	settings := filepath.Join(home, "userdata", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		return err
	}
	provider := map[string]string{"binaryPath": shim}
	maps.Copy(provider, more)
	other := DriverCodex
	if driver == DriverCodex {
		other = DriverClaude
	}
	b, _ := json.MarshalIndent(map[string]any{"providers": map[string]any{driver: provider, other: map[string]bool{"enabled": false}}}, "", "  ")
	if err := os.WriteFile(settings, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the server's settings: %w", err)
	}
	return nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
