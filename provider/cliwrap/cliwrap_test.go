package cliwrap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/provider/claude"
	"github.com/wireproof/wireproof/provider/cliwrap"
)

// tapServer is a stand-in for verify's provider tap: it keeps every frame.
type tapServer struct {
	*httptest.Server
	mu     sync.Mutex
	frames []claude.TapFrame
	done   chan struct{}
}

func newTapServer(t *testing.T) *tapServer {
	ts := &tapServer{done: make(chan struct{})}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ts.done)
		dec := json.NewDecoder(r.Body)
		for {
			var f claude.TapFrame
			if err := dec.Decode(&f); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("tap stream: %v", err)
				}
				return
			}
			ts.mu.Lock()
			ts.frames = append(ts.frames, f)
			ts.mu.Unlock()
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tapServer) lines(dir string) []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []string
	for _, f := range ts.frames {
		if f.Dir == dir {
			out = append(out, f.Line)
		}
	}
	return out
}

// TestWrapRelaysAndTaps runs a real child process through the wrapper: its
// stdio is relayed byte for byte and every line is tapped (argv first, the
// MCP URL rewritten to the proxy in what was run, stdin, stdout and stderr
// lines, the exit status last), its home is the private one, and a caller's
// OAuth token does not reach it.
func TestWrapRelaysAndTaps(t *testing.T) {
	ts := newTapServer(t)
	home := t.TempDir()
	cfg := `{"mcpServers":{"t3-code":{"type":"http","url":"http://127.0.0.1:4000/mcp","headers":{"Authorization":"Bearer tok"}}}}`
	argv := testkit.HelperArgv("--verbose", "--mcp-config", cfg, "--model", "m")
	env := map[string]string{
		claude.EnvTap: ts.URL, claude.EnvMCPProxy: "http://127.0.0.1:5000", claude.EnvMCPUpstream: "127.0.0.1:4000",
		cliwrap.EnvHome: home,
	}
	environ := append(testkit.HelperEnv("fakecli"), "CLAUDE_CODE_OAUTH_TOKEN=users-own", "HOME=/root/not-this", "OPENAI_API_KEY=users-own", "CODEX_HOME=/root/.codex")
	stdin := strings.NewReader("{\"a\":1}\n\n{\"b\":2}\n")
	var stdout, stderr bytes.Buffer
	code, err := cliwrap.Run(context.Background(), argv, &cliwrap.Options{
		Stdin: stdin, Stdout: &stdout, Stderr: &stderr, Environ: environ,
		Getenv: func(k string) string { return env[k] },
	})
	if err != nil || code != 3 {
		t.Fatalf("Run: code %d, err %v; stderr:\n%s", code, err, stderr.String())
	}
	<-ts.done
	if diff := cmp.Diff("{\"echo\":\"{\\\"A\\\":1}\"}\n{\"echo\":\"\"}\n{\"echo\":\"{\\\"B\\\":2}\"}\nno newline at the end", stdout.String()); diff != "" {
		t.Errorf("stdout relayed (-want +got):\n%s", diff)
	}
	proxied := strings.Replace(cfg, "127.0.0.1:4000", "127.0.0.1:5000", 1)
	first, last := ts.frames[0], ts.frames[len(ts.frames)-1]
	if diff := cmp.Diff(argv, first.Argv); diff != "" {
		t.Errorf("argv tapped (-want +got):\n%s", diff)
	}
	var ran map[string]any
	if len(first.Exec) != len(argv) || json.Unmarshal([]byte(first.Exec[4]), &ran) != nil {
		t.Fatalf("exec tapped: %q", first.Exec)
	}
	var want map[string]any
	_ = json.Unmarshal([]byte(proxied), &want)
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("the MCP configuration run (-want +got):\n%s", diff)
	}
	if first.Pid <= 0 {
		t.Errorf("pid %d", first.Pid)
	}
	if last.Exit == nil || *last.Exit != 3 || last.Signal != "" {
		t.Errorf("last frame %+v, want exit 3", last)
	}
	if diff := cmp.Diff([]string{`{"a":1}`, `{"b":2}`}, ts.lines(claude.TapIn)); diff != "" {
		t.Errorf("stdin lines tapped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`{"echo":"{\"A\":1}"}`, `{"echo":""}`, `{"echo":"{\"B\":2}"}`, "no newline at the end"}, ts.lines(claude.TapOut)); diff != "" {
		t.Errorf("stdout lines tapped (-want +got):\n%s", diff)
	}
	errs := ts.lines(claude.TapErr)
	wantEnv := "HOME=" + home + " CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude") + " CODEX_HOME=" + cliwrap.CodexHome(home) + " TMPDIR=" + filepath.Join(home, "tmp") + ` token="" openai=""`
	if len(errs) != 2 || !strings.Contains(errs[0], "127.0.0.1:5000") || errs[1] != wantEnv {
		t.Errorf("stderr lines tapped: %q\nwant the proxied URL in the args, then %q", errs, wantEnv)
	}
	if !strings.Contains(stderr.String(), wantEnv) {
		t.Errorf("stderr not relayed: %q", stderr.String())
	}
	for _, d := range []string{filepath.Join(home, ".claude"), cliwrap.CodexHome(home)} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Errorf("the private config dir: %v", err)
		}
	}
}

// TestWrapCodexStdin: the Codex CLI is given its MCP servers on stdin, in
// a JSON-RPC request's params.config.mcp_servers (T3's thread/start); the
// wrapper passes such a line on with the URL of a server the recording
// proxy stands in front of sent through the proxy, and taps it as the
// server wrote it. Other lines, and servers elsewhere, pass unchanged.
func TestWrapCodexStdin(t *testing.T) {
	ts := newTapServer(t)
	env := map[string]string{claude.EnvTap: ts.URL, claude.EnvMCPProxy: "http://127.0.0.1:5000", claude.EnvMCPUpstream: "127.0.0.1:4000"}
	start := `{"id":2,"method":"thread/start","params":{"cwd":"/w","config":{"mcp_servers":{"t3-code":{"url":"http://127.0.0.1:4000/mcp","http_headers":{"Authorization":"Bearer tok"}},"other":{"url":"http://127.0.0.1:4001/mcp"}}}}}`
	plain := `{"id":3,"method":"turn/start","params":{"input":[{"type":"text","text":"mcp_servers are named in \"mcp_servers\""}]}}`
	var stdout, stderr bytes.Buffer
	code, err := cliwrap.Run(context.Background(), testkit.HelperArgv("app-server"), &cliwrap.Options{
		Stdin: strings.NewReader(start + "\n" + plain + "\n"), Stdout: &stdout, Stderr: &stderr, Environ: testkit.HelperEnv("fakecli"),
		Getenv: func(k string) string { return env[k] },
	})
	if err != nil || code != 3 {
		t.Fatalf("Run: code %d, err %v; stderr:\n%s", code, err, stderr.String())
	}
	<-ts.done
	if diff := cmp.Diff([]string{start, plain}, ts.lines(claude.TapIn)); diff != "" {
		t.Errorf("stdin lines tapped (-want +got), want them as the server wrote them:\n%s", diff)
	}
	// fakecli echoes each line it read, upper-cased.
	var echoed []string
	for _, l := range ts.lines(claude.TapOut)[:2] {
		var e struct{ Echo string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		echoed = append(echoed, e.Echo)
	}
	var got, want map[string]any
	_ = json.Unmarshal([]byte(echoed[0]), &got)
	_ = json.Unmarshal([]byte(strings.ToUpper(strings.Replace(start, "127.0.0.1:4000", "127.0.0.1:5000", 1))), &want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the thread/start the CLI read (-want +got):\n%s", diff)
	}
	if echoed[1] != strings.ToUpper(plain) {
		t.Errorf("the CLI read %q, want %q unchanged", echoed[1], plain)
	}
}

// TestWrapSignal: a signal the wrapper receives reaches the CLI, and a CLI
// killed by it is reported as exit -1 with the signal, the wrapper exiting
// 128+N as a shell would.
func TestWrapSignal(t *testing.T) {
	ts := newTapServer(t)
	sigs := make(chan os.Signal, 1)
	pr, pw := io.Pipe()
	defer pw.Close()
	out := &lineWaiter{line: `{"type":"up"}`, seen: make(chan struct{})}
	type result struct {
		code int
		err  error
	}
	res := make(chan result, 1)
	go func() {
		code, err := cliwrap.Run(context.Background(), testkit.HelperArgv(), &cliwrap.Options{
			Stdin: pr, Stdout: out, Stderr: io.Discard, Environ: testkit.HelperEnv("sleeper"), Signals: sigs,
			Getenv: func(k string) string {
				if k == claude.EnvTap {
					return ts.URL
				}
				return ""
			},
		})
		res <- result{code, err}
	}()
	select {
	case <-out.seen:
	case <-time.After(2 * time.Minute):
		t.Fatal("the CLI never started")
	}
	sigs <- syscall.SIGTERM
	r := <-res
	if r.err != nil || r.code != 128+int(syscall.SIGTERM) {
		t.Fatalf("Run: %d, %v; want %d", r.code, r.err, 128+int(syscall.SIGTERM))
	}
	pw.Close() // the stdin relay ends
	<-ts.done
	last := ts.frames[len(ts.frames)-1]
	if last.Exit == nil || *last.Exit != -1 || last.Signal != "SIGTERM" {
		t.Errorf("exit frame %+v, want -1 SIGTERM", last)
	}
	if !slices.Contains(ts.lines(claude.TapOut), `{"type":"up"}`) {
		t.Errorf("stdout tapped: %q", ts.lines(claude.TapOut))
	}
}

// TestWrapUsage: no CLI to run is a usage error (exit 2); a CLI that cannot
// be started exits 127, as a shell's command not found.
func TestWrapUsage(t *testing.T) {
	if code, err := cliwrap.Run(context.Background(), nil, &cliwrap.Options{Getenv: func(string) string { return "" }}); code != 2 || err == nil {
		t.Errorf("no args: %d, %v", code, err)
	}
	code, err := cliwrap.Run(context.Background(), []string{filepath.Join(t.TempDir(), "no-such-claude")}, &cliwrap.Options{
		Stdin: strings.NewReader(""), Getenv: func(string) string { return "" }})
	if code != 127 || err == nil || !strings.Contains(err.Error(), "no-such-claude") {
		t.Errorf("missing CLI: %d, %v", code, err)
	}
	_, err = cliwrap.Run(context.Background(), []string{"claude", "--mcp-config"}, &cliwrap.Options{
		Getenv: func(k string) string {
			return map[string]string{claude.EnvMCPProxy: "http://127.0.0.1:1", claude.EnvMCPUpstream: "127.0.0.1:2"}[k]
		}})
	var ue *cliwrap.UsageError
	if !errors.As(err, &ue) {
		t.Errorf("--mcp-config without a value: %v", err)
	}
}

// lineWaiter closes seen when line has been written to it.
type lineWaiter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line string
	seen chan struct{}
	once sync.Once
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.line) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}
