package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/verify"
)

// t3Tools is a stand-in for the server's MCP endpoint (delegate_task,
// task_status over Streamable HTTP, JSON answers) and a gate, on loopback.
type t3Tools struct {
	secret string
	mu     sync.Mutex
	calls  []string // tools/call name and arguments
}

func (s *t3Tools) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/gate" {
		_, _ = io.WriteString(w, s.secret)
		return
	}
	if r.URL.Path != "/mcp" || r.Method != http.MethodPost {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	schema := func(props ...string) map[string]any {
		p := map[string]any{}
		for _, n := range props {
			p[n] = map[string]any{"type": "string"}
		}
		return map[string]any{"type": "object", "properties": p, "required": props[:1]}
	}
	var result any
	switch m.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "t3-code", "version": "0"}}
	case "tools/list":
		result = map[string]any{"tools": []any{
			map[string]any{"name": "delegate_task", "description": "Delegate a task to a child thread", "inputSchema": schema("task", "mode", "target")},
			map[string]any{"name": "task_status", "description": "Read a delegated task's status", "inputSchema": schema("taskId")},
		}}
	case "tools/call":
		s.mu.Lock()
		s.calls = append(s.calls, m.Params.Name+" "+string(m.Params.Arguments))
		s.mu.Unlock()
		doc := map[string]any{"taskId": "task-1", "childThreadId": "thread-2", "status": "running"}
		if m.Params.Name == "task_status" {
			doc = map[string]any{"taskId": "task-1", "status": "completed", "result": s.secret}
		}
		text, _ := json.Marshal(doc)
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}}
	default:
		result = map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// TestRealCodexCLI runs the real Codex CLI against the scripted Responses
// API (a real loopback server) with a T3-like MCP server and a gate: the
// idle launch prompt delegates over MCP and releases, the wake (a second
// turn of the same session, codex exec resume) reads task_status and
// answers ACK:<secret>, and the delegated task fetches the gate with
// exec_command and answers the secret bare.
func TestRealCodexCLI(t *testing.T) {
	bin := testkit.CodexCLI(t, "..")
	m := startModel(t, "")
	tools := &t3Tools{secret: "wp-secret-" + fmt.Sprint(time.Now().UnixNano()%1000000)}
	srv := httptest.NewServer(tools)
	t.Cleanup(srv.Close)
	home, work := t.TempDir(), t.TempDir()
	cfg := fmt.Sprintf("model = \"gpt-5-codex\"\nmodel_provider = \"wp\"\n[model_providers.wp]\nname = \"wp\"\nbase_url = %q\nwire_api = \"responses\"\nenv_key = \"WP_KEY\"\n[mcp_servers.t3-code]\nurl = %q\n",
		m.URL()+"/v1", srv.URL+"/mcp")
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, append([]string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+home, "WP_KEY=test-key")
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("codex %v: %v\nstdout: %s\nstderr: %s", args[:1], err, out, stderr)
		}
		return strings.TrimSpace(string(out))
	}
	gate := srv.URL + "/gate"
	if got := run(verify.Prompt(assert.ScenarioIdle, "codex", "gpt-5-codex", gate)); got != "PARENT_RELEASED" {
		t.Errorf("the launch turn answered %q, want PARENT_RELEASED", got)
	}
	if got, want := run("resume", "--last", "Delegated task task-1 completed. Use task_status with taskId task-1 to read the result."), "ACK:"+tools.secret; got != want {
		t.Errorf("the wake answered %q, want %q", got, want)
	}
	tools.mu.Lock()
	calls := append([]string(nil), tools.calls...)
	tools.mu.Unlock()
	if len(calls) != 2 || !strings.HasPrefix(calls[0], "delegate_task ") || !strings.Contains(calls[0], gate) || !strings.Contains(calls[0], `"mode":"async"`) || calls[1] != `task_status {"taskId":"task-1"}` {
		t.Errorf("MCP calls %q, want delegate_task of the gate's task, then task_status of task-1", calls)
	}
	var task struct {
		Task string `json:"task"`
	}
	_ = json.Unmarshal([]byte(strings.TrimPrefix(calls[0], "delegate_task ")), &task)
	if task.Task == "" {
		t.Fatalf("no task in %q", calls[0])
	}
	if got := run(task.Task); got != tools.secret {
		t.Errorf("the delegated task answered %q, want the gate's %q", got, tools.secret)
	}
}
