// Package cliwrap is the evidence wrapper around a real provider CLI
// (`wireproof provider wrap CLI ARGS...`): an orchestration server is given
// it as its Claude or Codex executable, and it execs the real CLI with the
// server's arguments while streaming, to the recorder's stdio tap
// (claude.EnvTap), the argv, every stdin, stdout and stderr line and the
// exit, exactly as the scripted provider streams its own. It changes two
// things on the way, both recorded: the MCP servers that the recording proxy
// stands in front of (claude.EnvMCPUpstream) are reached through the proxy
// (claude.EnvMCPProxy), those of --mcp-config in argv (Claude) and those a
// JSON-RPC request names on stdin (Codex's thread/start, codex.go); and the
// CLI gets a private home (EnvHome) and no credential from the caller's
// environment other than the run's own.
//
// The bytes between the server and the CLI are relayed unchanged, line by
// line, and each line is tapped as it is relayed.
package cliwrap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/wireproof/wireproof/provider/claude"
)

// EnvHome is a directory the CLI uses as its HOME and, below it,
// CLAUDE_CONFIG_DIR (.claude), CODEX_HOME (.codex) and TMPDIR (tmp), so the user's own
// configuration, credentials and history are neither used nor touched, and
// nothing of the run is left in the system's temporary directory. Unset:
// the caller's.
const EnvHome = "WIREPROOF_PROVIDER_HOME"

// CredentialEnv are the caller's credentials and provider switches the CLI
// must not see: a run's CLI reaches only the model it was given
// (ANTHROPIC_BASE_URL with the run's ANTHROPIC_API_KEY), never an account of
// the user's.
var CredentialEnv = []string{
	"ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
	"CLAUDE_CODE_USE_FOUNDRY", "AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_CUSTOM_HEADERS", "CLAUDECODE",
	// The Codex CLI's: its OpenAI key and endpoint, and its own key variable.
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_ORGANIZATION", "OPENAI_PROJECT", "CODEX_API_KEY",
	"AZURE_OPENAI_API_KEY",
}

// Options are the process's surroundings; nil fields mean the process's own.
type Options struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Environ        []string     // the CLI's environment before the wrapper's changes; nil: os.Environ()
	HTTPClient     *http.Client // for the tap
	// Signals, if set, are forwarded to the CLI; nil: SIGTERM, SIGINT and
	// SIGHUP received by this process.
	Signals <-chan os.Signal
}

// UsageError is a command line the wrapper cannot run.
type UsageError struct{ Why string }

func (e *UsageError) Error() string { return e.Why }

// Main runs the wrapper as a process (args follow `wireproof provider
// wrap`) and returns its exit status: the CLI's, 128+N when signal N ended
// it, 2 for a usage error, 127 when the CLI cannot be started.
func Main(args []string) int {
	code, err := Run(context.Background(), args, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wireproof provider wrap: "+err.Error())
	}
	return code
}

// Run execs the CLI named by args[0] with the rest as its arguments and
// relays and taps its stdio until it exits; it returns the exit status to
// exit with.
func Run(ctx context.Context, args []string, o *Options) (int, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.Stdin == nil {
		opts.Stdin = os.Stdin
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 || args[0] == "" {
		return 2, &UsageError{"wrap needs the CLI to run: wireproof provider wrap CLI [ARGS...]"}
	}
	cli, cliArgs := args[0], args[1:]
	home := opts.Getenv(EnvHome)
	proxy, upstream, err := mcpProxy(opts.Getenv(claude.EnvMCPProxy), opts.Getenv(claude.EnvMCPUpstream))
	if err != nil {
		return 2, &UsageError{err.Error()}
	}
	run, err := rewriteMCP(cliArgs, proxy, upstream, home)
	if err != nil {
		return 2, &UsageError{err.Error()}
	}
	var rewriteIn func([]byte) []byte
	if proxy != nil {
		rewriteIn = func(line []byte) []byte { return rewriteStdinMCP(line, proxy, upstream) }
	}
	env, err := Env(opts.Environ, home)
	if err != nil {
		return 127, err
	}

	cmd := exec.Command(cli, run...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 127, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 127, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 127, err
	}
	if err := cmd.Start(); err != nil {
		return 127, fmt.Errorf("starting %s: %w", cli, err)
	}
	var tap *claude.Tap
	if u := opts.Getenv(claude.EnvTap); u != "" {
		logf := func(format string, a ...any) {
			fmt.Fprintf(opts.Stderr, "wireproof provider wrap: "+format+"\n", a...)
		}
		first := claude.TapFrame{Argv: append([]string{cli}, cliArgs...), Pid: cmd.Process.Pid}
		if !slices.Equal(run, cliArgs) {
			first.Exec = append([]string{cli}, run...)
		}
		tap = claude.NewTap(u, opts.HTTPClient, first, logf)
	}

	sigs := opts.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		defer signal.Stop(ch)
		sigs = ch
	}
	stopSignals := make(chan struct{})
	var sigWG sync.WaitGroup
	sigWG.Go(func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-stopSignals:
				return
			case <-ctx.Done():
				_ = cmd.Process.Signal(syscall.SIGTERM)
				return
			}
		}
	})

	// stdin is relayed until its end (or until the CLI stops reading); the
	// CLI's stdout and stderr until the CLI closes them.
	var outs sync.WaitGroup
	go func() {
		relay(opts.Stdin, stdin, tap, claude.TapIn, rewriteIn)
		stdin.Close()
	}()
	outs.Go(func() { relay(stdout, opts.Stdout, tap, claude.TapOut, nil) })
	outs.Go(func() { relay(stderr, opts.Stderr, tap, claude.TapErr, nil) })
	outs.Wait()
	werr := cmd.Wait()
	close(stopSignals)
	sigWG.Wait()

	code, sig := exitStatus(cmd.ProcessState)
	tap.Close(code, sig)
	if werr != nil && cmd.ProcessState == nil {
		return 127, werr
	}
	if code < 0 {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return 1, nil
	}
	return code, nil
}

// relay copies r to w line by line, tapping each line (without its newline)
// as dir. A final line without a newline is relayed and tapped too. A write
// error stops the relay from writing but not from reading: the other side has
// gone, and the CLI must not block on a full pipe. rewrite, if set, is
// applied to each line after it is tapped, before it is passed on.
func relay(r io.Reader, w io.Writer, tap *claude.Tap, dir string, rewrite func([]byte) []byte) {
	br := bufio.NewReaderSize(r, 64<<10)
	writing := true
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			// Tapped before it is passed on: whatever answers it is recorded after it.
			text := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
			if strings.TrimSpace(text) != "" {
				tap.Send(claude.TapFrame{Dir: dir, Line: text})
			}
			if rewrite != nil {
				line = rewrite(line)
			}
			if writing {
				if _, werr := w.Write(line); werr != nil {
					writing = false
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// exitStatus is the process's exit code, or -1 and the signal's name.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, signalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// CodexHome is the Codex CLI's CODEX_HOME below a private home (EnvHome):
// where verify writes its config.toml.
func CodexHome(home string) string { return filepath.Join(home, ".codex") }

// Env is the CLI's environment: the caller's without its credentials and
// provider switches (CredentialEnv), and with the private home when one is
// set, the Claude CLI's and the Codex CLI's configuration directories and
// TMPDIR below it (the CLI leaves its task output files and sockets in
// TMPDIR; they go with the home).
func Env(environ []string, home string) ([]string, error) {
	drop := CredentialEnv
	if home != "" {
		drop = append(slices.Clip(drop), "HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "TMPDIR")
	}
	out := WithoutEnv(environ, drop)
	if home != "" {
		cfg, codex, tmp := filepath.Join(home, ".claude"), CodexHome(home), filepath.Join(home, "tmp")
		for _, d := range []string{cfg, codex, tmp} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, fmt.Errorf("making the CLI's home: %w", err)
			}
		}
		out = append(out, "HOME="+home, "CLAUDE_CONFIG_DIR="+cfg, "CODEX_HOME="+codex, "TMPDIR="+tmp)
	}
	return out, nil
}

// mcpProxy reads the recording proxy's origin and the upstream host:port it
// stands in front of; a nil proxy means none (either is unset).
func mcpProxy(proxy, upstream string) (*url.URL, string, error) {
	if proxy == "" || upstream == "" {
		return nil, "", nil
	}
	p, err := url.Parse(proxy)
	if err != nil || p.Host == "" {
		return nil, "", fmt.Errorf("%s=%q is not an origin such as http://127.0.0.1:PORT", claude.EnvMCPProxy, proxy)
	}
	return p, upstream, nil
}

// rewriteMCP returns args with every --mcp-config server whose URL names the
// upstream host:port sent to the proxy's origin instead. A configuration
// given as a file is rewritten into a new file in dir (or the system temp
// directory). Without a proxy (nil), args are returned as they are.
func rewriteMCP(args []string, p *url.URL, upstream, dir string) ([]string, error) {
	if p == nil {
		return args, nil
	}
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		name, value, inline := strings.Cut(out[i], "=")
		if name != "--mcp-config" {
			continue
		}
		at := i
		if !inline {
			if i+1 >= len(out) {
				return nil, errors.New("--mcp-config needs a value")
			}
			at, value = i+1, out[i+1]
			i++
		}
		nv, err := rewriteConfig(value, p, upstream, dir)
		if err != nil {
			return nil, err
		}
		if inline {
			out[at] = name + "=" + nv
		} else {
			out[at] = nv
		}
	}
	return out, nil
}

// rewriteConfig rewrites one --mcp-config value: JSON, or a file holding it.
func rewriteConfig(value string, proxy *url.URL, upstream, dir string) (string, error) {
	raw, file := []byte(value), ""
	if t := strings.TrimSpace(value); !strings.HasPrefix(t, "{") {
		b, err := os.ReadFile(t)
		if err != nil {
			return "", fmt.Errorf("--mcp-config: %w", err)
		}
		raw, file = b, t
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "", fmt.Errorf("--mcp-config: not an MCP configuration: %w", err)
	}
	servers, changed := rewriteServers(doc["mcpServers"], proxy, upstream)
	if !changed {
		return value, nil
	}
	doc["mcpServers"] = servers
	b, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	if file == "" {
		return string(b), nil
	}
	f, err := os.CreateTemp(dir, "mcp-config-*.json")
	if err != nil {
		return "", fmt.Errorf("--mcp-config: writing the proxied configuration: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return "", fmt.Errorf("--mcp-config: writing the proxied configuration: %w", err)
	}
	return f.Name(), nil
}

// WithoutEnv returns environ (KEY=value entries) without the variables named
// in drop.
func WithoutEnv(environ, drop []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, k) {
			out = append(out, kv)
		}
	}
	return out
}
