package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
)

// claudeSDKDir holds the Claude Agent SDK client (client.mjs) and its pinned
// dependencies: @anthropic-ai/claude-agent-sdk and the official TypeScript
// MCP SDK.
const claudeSDKDir = "claude-sdk"

// claudeSDKReport is what client.mjs prints.
type claudeSDKReport struct {
	Init *struct {
		Model      string `json:"model"`
		MCPServers []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"mcpServers"`
	} `json:"init"`
	ToolUses    []string `json:"toolUses"`
	ToolResults []string `json:"toolResults"`
	Texts       []string `json:"texts"`
	Results     []struct {
		Subtype string `json:"subtype"`
		IsError bool   `json:"isError"`
		Result  string `json:"result"`
	} `json:"results"`
	MCPCalls []map[string]string `json:"mcpCalls"`
}

// TestClaudeAgentSDK runs the real Claude Agent SDK (npm) with
// pathToClaudeCodeExecutable pointed at the scripted provider (this test
// binary as `provider claude`, through TestMain): initialize, system/init
// with the MCP server connected, a turn that calls delegate_task on a test
// MCP server built with the official TypeScript MCP SDK, its result, then the
// wake turn with task_status and ACK:<result>. Without node or the client's
// node_modules it skips.
func TestClaudeAgentSDK(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Missing(t, testkit.EnvNodeRequired, "skipping the Claude Agent SDK interoperability test: node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(claudeSDKDir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "package.json")); err != nil {
		testkit.Missing(t, testkit.EnvNodeRequired, "skipping the Claude Agent SDK interoperability test: interop/claude-sdk/node_modules is missing (run: cd interop/claude-sdk && npm ci --omit=optional)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\nexec '" + strings.ReplaceAll(exe, "'", `'\''`) + "' provider claude \"$@\"\n"
	if err := os.WriteFile(shim, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	gate := "http://127.0.0.1:9/gate"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", shim, gate)
	cmd.Dir = claudeSDKDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var got claudeSDKReport
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("client.mjs printed %q: %v", stdout.String(), err)
	}
	if got.Init == nil || got.Init.Model != "claude-sonnet-4-6" || len(got.Init.MCPServers) != 1 || got.Init.MCPServers[0].Status != "connected" {
		t.Errorf("system/init as the SDK saw it: %+v", got.Init)
	}
	if diff := cmp.Diff([]string{"mcp__t3-code__delegate_task", "mcp__t3-code__task_status"}, got.ToolUses); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PARENT_RELEASED", "ACK:RESULT_interop"}, got.Texts); diff != "" {
		t.Errorf("assistant text (-want +got):\n%s", diff)
	}
	if len(got.Results) != 2 || got.Results[0].IsError || got.Results[1].Result != "ACK:RESULT_interop" || got.Results[1].Subtype != "success" {
		t.Errorf("results %+v", got.Results)
	}
	wantCalls := []map[string]string{
		{"tool": "delegate_task", "mode": "async", "task": "Run curl --fail --silent " + gate + " with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. Do not read other files. Do not retry failures."},
		{"tool": "task_status", "taskId": "task-1"},
	}
	if diff := cmp.Diff(wantCalls, got.MCPCalls); diff != "" {
		t.Errorf("calls the MCP server received (-want +got):\n%s", diff)
	}
	if strings.Contains(stderr.String(), "ignoring arguments I do not know") {
		t.Errorf("the provider did not know an argument the SDK passes:\n%s", stderr.String())
	}
}
