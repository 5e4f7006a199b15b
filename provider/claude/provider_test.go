package claude_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/provider/claude"
	"github.com/wireproof/wireproof/verify"
)

func TestMain(m *testing.M) {
	// The tests start provider processes as os.Args[0] provider claude.
	claude.HelperMain()
	testkit.Main(m, nil)
}

// toolServer is a loopback MCP server with the orchestration server's two
// tools; it records every call with the bearer token it came with.
type toolServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string
	auth  []string
}

type taskArgs struct {
	Task   string `json:"task,omitempty"`
	Mode   string `json:"mode,omitempty"`
	TaskID string `json:"taskId,omitempty"`
}

func newToolServer(t *testing.T, result string) *toolServer {
	ts := &toolServer{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "t3-code", Version: "test"}, nil)
	text := func(v any) *mcp.CallToolResult {
		b, _ := json.Marshal(v)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	}
	record := func(req *mcp.CallToolRequest, call string) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		ts.calls = append(ts.calls, call)
		ts.auth = append(ts.auth, req.Extra.Header.Get("Authorization"))
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "delegate_task"}, func(_ context.Context, req *mcp.CallToolRequest, in taskArgs) (*mcp.CallToolResult, any, error) {
		record(req, "delegate_task "+in.Mode+" "+in.Task)
		return text(map[string]string{"taskId": "task-1", "childThreadId": "child-1", "status": "running"}), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "task_status"}, func(_ context.Context, req *mcp.CallToolRequest, in taskArgs) (*mcp.CallToolResult, any, error) {
		record(req, "task_status "+in.TaskID)
		return text(map[string]string{"taskId": in.TaskID, "status": "completed", "result": result}), nil, nil
	})
	ts.Server = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *toolServer) Calls() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.calls...)
}

func (ts *toolServer) mcpConfig(token string) string {
	return fmt.Sprintf(`{"mcpServers":{"t3-code":{"type":"http","url":%q,"headers":{"Authorization":"Bearer %s"}}}}`, ts.URL+"/mcp", token)
}

// proc is a provider process driven as the SDK drives it.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan claude.Message
	stderr *bytes.Buffer
	exited chan struct{} // closed when the process was waited for
	err    error         // its exit error, set before exited is closed
}

func startProvider(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	argv := append([]string{"provider", "claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--model", "claude-sonnet-4-6"}, args...)
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Env = append(os.Environ(), env...)
	p := &proc{t: t, cmd: cmd, lines: make(chan claude.Message, 256), stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m claude.Message
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = claude.Message{Type: "malformed", Summary: sc.Text()}
			}
			p.lines <- m
		}
		close(p.lines)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		// SIGTERM, not SIGKILL: the provider must get to remove its
		// background tasks' output files.
		p.stdin.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		<-p.exited
	})
	return p
}

func (p *proc) send(m claude.Message) {
	p.t.Helper()
	b, _ := json.Marshal(m)
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.t.Fatal(err)
	}
}

// until reads lines up to and including the first one of type typ and
// returns them summarised.
func (p *proc) until(typ string) []string {
	p.t.Helper()
	var got []string
	for m := range p.lines {
		got = append(got, summarise(m))
		if m.Type == typ {
			return got
		}
	}
	p.t.Fatalf("stdout ended before a %s line; got %q; stderr:\n%s", typ, got, p.stderr)
	return nil
}

// summarise names a line by what the SDK reads from it.
func summarise(m claude.Message) string {
	switch m.Type {
	case claude.TypeAssistant, claude.TypeUser:
		var parts []string
		for _, b := range m.Message.Content {
			switch b.Type {
			case "text":
				parts = append(parts, m.Type+" text "+b.Text)
			case "tool_use":
				parts = append(parts, m.Type+" tool_use "+b.Name+" "+string(b.Input))
			case "tool_result":
				parts = append(parts, fmt.Sprintf("%s tool_result %s error=%v", m.Type, b.Content, b.IsError))
			}
		}
		return strings.Join(parts, "; ")
	case claude.TypeSystem:
		return "system " + m.Subtype
	case claude.TypeResult:
		s := fmt.Sprintf("result %s error=%v", *m.Result, *m.IsError)
		if m.Origin != nil {
			s += " origin=" + m.Origin.Kind
		}
		return s
	case claude.TypeControlResponse:
		return "control_response " + m.Response.Subtype + " " + m.Response.RequestID
	}
	return m.Type + " " + m.Summary
}

func (p *proc) exit() error {
	p.t.Helper()
	for range p.lines {
	}
	<-p.exited
	return p.err
}

func TestVersion(t *testing.T) {
	out, err := exec.Command(os.Args[0], "provider", "claude", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != claude.Version+" (Claude Code)" {
		t.Errorf("--version printed %q", got)
	}
}

// TestInitializeProbe is the server's health check: only the initialize
// control request, then stdin ends; the answer carries an account and the
// process exits 0 without writing anything else.
func TestInitializeProbe(t *testing.T) {
	p := startProvider(t, nil)
	p.send(claude.ControlLine("req-1", "initialize"))
	var first claude.Message
	for m := range p.lines {
		first = m
		break
	}
	if first.Type != claude.TypeControlResponse || first.Response.RequestID != "req-1" || first.Response.Subtype != "success" {
		t.Fatalf("first line %+v, want the initialize answer", first)
	}
	var init claude.InitializeResponse
	if err := json.Unmarshal(first.Response.Response, &init); err != nil {
		t.Fatal(err)
	}
	if init.Account.Email == "" || len(init.Models) == 0 {
		t.Errorf("initialize answer without account or models: %+v", init)
	}
	p.send(claude.ControlLine("req-2", "set_permission_mode"))
	p.stdin.Close()
	var rest []string
	for m := range p.lines {
		rest = append(rest, summarise(m))
	}
	if diff := cmp.Diff([]string{"control_response success req-2"}, rest); diff != "" {
		t.Errorf("after initialize (-want +got):\n%s", diff)
	}
	if err := p.exit(); err != nil {
		t.Errorf("exit on stdin EOF: %v (stderr %s)", err, p.stderr)
	}
}

// gate answers every request with the secret at once.
func newGate(t *testing.T, secret string) *httptest.Server {
	g := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, secret) }))
	t.Cleanup(g.Close)
	return g
}

func TestIdleParentAndWake(t *testing.T) {
	tools := newToolServer(t, "s3cret")
	gate := "http://127.0.0.1:1/gate"
	p := startProvider(t, nil, "--mcp-config", tools.mcpConfig("tok-1"), "--session-id=5b1d", "--strict-mcp-config", "--setting-sources", "")
	p.send(claude.ControlLine("r1", "initialize"))
	p.send(claude.UserText(verify.Prompt("idle", "claudeAgent", "m", gate)))
	got := p.until(claude.TypeResult)
	leaf := claude.FetchTask(gate)
	want := []string{
		"control_response success r1",
		"system init",
		`assistant tool_use mcp__t3-code__delegate_task {"mode":"async","task":"` + leaf + `"}`,
		`user tool_result {"childThreadId":"child-1","status":"running","taskId":"task-1"} error=false`,
		"assistant text PARENT_RELEASED",
		"result PARENT_RELEASED error=false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first turn (-want +got):\n%s", diff)
	}
	p.send(claude.UserText("Delegated task task-1 completed. Use task_status with taskId task-1 to read the result."))
	got = p.until(claude.TypeResult)
	want = []string{
		`assistant tool_use mcp__t3-code__task_status {"taskId":"task-1"}`,
		`user tool_result {"result":"s3cret","status":"completed","taskId":"task-1"} error=false`,
		"assistant text ACK:s3cret",
		"result ACK:s3cret error=false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wake turn (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"delegate_task async " + leaf, "task_status task-1"}, tools.Calls()); diff != "" {
		t.Errorf("MCP calls (-want +got):\n%s", diff)
	}
	for _, a := range tools.auth {
		if a != "Bearer tok-1" {
			t.Errorf("MCP call with Authorization %q, want the configured bearer token", a)
		}
	}
	p.stdin.Close()
	if err := p.exit(); err != nil {
		t.Errorf("exit: %v", err)
	}
}

func TestChildFetchesGate(t *testing.T) {
	for _, tc := range []struct {
		name, fault string
		want        []string
	}{
		{"ok", "", []string{"system init", "BASH", "user tool_result s3cret error=false", "assistant text s3cret", "result s3cret error=false"}},
		{"gate failure propagated", claude.FaultGateFailurePropagated, []string{"system init", "BASH", "user tool_result s3cret error=false",
			"assistant text curl: (22) The requested URL returned error: 503", "result curl: (22) The requested URL returned error: 503 error=true"}},
		{"early result", claude.FaultEarlyChildResult, []string{"system init", "assistant text The request was sent; its answer will follow.", "result The request was sent; its answer will follow. error=false"}},
		{"malformed line", claude.FaultMalformedLine, []string{"system init", "BASH", "user tool_result s3cret error=false", "malformed " + `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":`, "assistant text s3cret", "result s3cret error=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := newGate(t, "s3cret")
			p := startProvider(t, []string{claude.EnvFault + "=" + tc.fault})
			p.send(claude.UserText(claude.FetchTask(gate.URL + "/g")))
			got := p.until(claude.TypeResult)
			bash := fmt.Sprintf(`assistant tool_use Bash {"command":"curl --fail --silent %s/g","description":"Fetch %s/g","timeout":600000}`, gate.URL, gate.URL)
			want := slicesReplace(tc.want, "BASH", bash)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("child turn (-want +got):\n%s", diff)
			}
		})
	}
}

func slicesReplace(ss []string, old, repl string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if s == old {
			s = repl
		}
		out[i] = s
	}
	return out
}

func TestNativeBackgroundTask(t *testing.T) {
	gate := newGate(t, "s3cret")
	p := startProvider(t, nil)
	p.send(claude.UserText(verify.Prompt("native", "claudeAgent", "m", gate.URL+"/g")))
	got := p.until(claude.TypeResult)
	if diff := cmp.Diff([]string{"system init", "BASH", "user tool_result", "system task_started", "assistant text PARENT_RELEASED", "result PARENT_RELEASED error=false"}, prefixes(got)); diff != "" {
		t.Errorf("first turn (-want +got):\n%s", diff)
	}
	got = p.until(claude.TypeResult)
	if diff := cmp.Diff([]string{"system task_notification", "BASH", "user tool_result", "assistant text ACK:s3cret", "result ACK:s3cret error=false origin=task-notification"}, prefixes(got)); diff != "" {
		t.Errorf("automatic turn (-want +got):\n%s", diff)
	}
}

// prefixes keeps what identifies each summarised line: tool calls by kind.
func prefixes(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		switch {
		case strings.HasPrefix(s, "assistant tool_use"):
			s = "BASH"
		case strings.HasPrefix(s, "user tool_result"):
			s = "user tool_result"
		}
		out[i] = s
	}
	return out
}

func TestUnknownPromptGetsCannedReply(t *testing.T) {
	p := startProvider(t, nil)
	p.send(claude.UserText("What is the weather like?"))
	got := p.until(claude.TypeResult)
	want := []string{"system init", "assistant text I found no task to run in this message.", "result I found no task to run in this message. error=false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	p.stdin.Close()
	p.exit()
	if !strings.Contains(p.stderr.String(), "did not understand") {
		t.Errorf("stderr does not say what was not understood: %s", p.stderr)
	}
}

// TestSIGTERMMidTurn: a provider held in a gate request ends at once and
// cleanly on SIGTERM.
func TestSIGTERMMidTurn(t *testing.T) {
	held := make(chan struct{})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(held)
		<-r.Context().Done()
	}))
	defer gate.Close()
	p := startProvider(t, nil)
	p.send(claude.UserText(claude.FetchTask(gate.URL + "/g")))
	<-held
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.exit(); err != nil {
		t.Errorf("exit after SIGTERM: %v (stderr %s)", err, p.stderr)
	}
}

// TestBashTimeout: a gate that never answers ends the Bash tool call at the
// timeout it announced (capped here by BASH_MAX_TIMEOUT_MS, as the Claude
// CLI caps it), with the tool's timeout error, and the turn goes on.
func TestBashTimeout(t *testing.T) {
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer gate.Close()
	p := startProvider(t, []string{claude.EnvBashMaxTimeout + "=300"})
	p.send(claude.UserText(claude.FetchTask(gate.URL + "/g")))
	got := p.until(claude.TypeResult)
	bash := fmt.Sprintf(`assistant tool_use Bash {"command":"curl --fail --silent %s/g","description":"Fetch %s/g","timeout":600000}`, gate.URL, gate.URL)
	want := []string{"system init", bash, "user tool_result Command timed out after 300ms error=true",
		"assistant text Command timed out after 300ms", "result Command timed out after 300ms error=true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("child turn (-want +got):\n%s", diff)
	}
}

func TestCrashFault(t *testing.T) {
	tools := newToolServer(t, "x")
	p := startProvider(t, []string{claude.EnvFault + "=" + claude.FaultCrashMidTurn}, "--mcp-config", tools.mcpConfig("t"))
	p.send(claude.UserText(verify.Prompt("idle", "claudeAgent", "m", "http://127.0.0.1:1/g")))
	var got []string
	for m := range p.lines {
		got = append(got, prefixes([]string{summarise(m)})...)
	}
	if diff := cmp.Diff([]string{"system init", "BASH", "user tool_result"}, got); diff != "" {
		t.Errorf("lines before the crash (-want +got):\n%s", diff)
	}
	err := p.exit()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want status 1", err)
	}
}

// TestEvidence: with the tap and proxy variables set, the provider streams
// its argv and every stdin and stdout line to the tap endpoint, and its MCP
// requests go through the proxy.
func TestEvidence(t *testing.T) {
	tools := newToolServer(t, "s3cret")
	var proxied sync.Map
	up, _ := url.Parse(tools.URL)
	rp := httputil.NewSingleHostReverseProxy(up)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Store(r.Method+" "+r.URL.Path, true)
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	frames := make(chan []claude.TapFrame, 1)
	tap := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var got []claude.TapFrame
		dec := json.NewDecoder(r.Body)
		for {
			var f claude.TapFrame
			if dec.Decode(&f) != nil {
				break
			}
			got = append(got, f)
		}
		frames <- got
	}))
	defer tap.Close()
	p := startProvider(t, []string{claude.EnvTap + "=" + tap.URL + "/stdio", claude.EnvMCPProxy + "=" + proxy.URL, claude.EnvMCPUpstream + "=" + up.Host},
		"--mcp-config", tools.mcpConfig("tok"))
	p.send(claude.UserText(verify.Prompt("idle", "claudeAgent", "m", "http://127.0.0.1:1/g")))
	out := p.until(claude.TypeResult)
	p.stdin.Close()
	if err := p.exit(); err != nil {
		t.Fatal(err)
	}
	got := <-frames
	if len(got) < 2 || len(got[0].Argv) < 3 || got[0].Argv[0] != os.Args[0] || got[0].Argv[2] != "claude" || got[0].Pid != p.cmd.Process.Pid {
		t.Fatalf("first frame %+v, want argv and pid", got)
	}
	if !strings.Contains(strings.Join(got[0].Argv, " "), "--mcp-config") {
		t.Errorf("argv %q lacks the arguments", got[0].Argv)
	}
	var in, outs int
	for _, f := range got[1 : len(got)-1] {
		switch f.Dir {
		case claude.TapIn:
			in++
		case claude.TapOut:
			outs++
		}
	}
	if in != 1 || outs != len(out) {
		t.Errorf("tap saw %d stdin and %d stdout lines, want 1 and %d", in, outs, len(out))
	}
	if last := got[len(got)-1]; last.Exit == nil || *last.Exit != 0 {
		t.Errorf("last frame %+v, want exit 0", last)
	}
	if _, ok := proxied.Load("POST /mcp"); !ok {
		t.Errorf("no MCP request went through the proxy")
	}
}
