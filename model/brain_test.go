package model_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/anthropic"
)

// readRequest reads a request of testdata/requests: real Claude CLI 2.1.328
// requests captured against this server (trimmed of the system prompt, tool
// descriptions and metadata; see docs/model.md).
func readRequest(t testing.TB, name string) *anthropic.Request {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "requests", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	req, aerr := model.ParseRequest(b, true)
	if aerr != nil {
		t.Fatalf("%s: %v", name, aerr)
	}
	return req
}

// turn is a Turn with its input as JSON, for comparison.
type turn struct {
	Plan, Step, Text, Tool, Input string
	First                         bool
}

func flatten(t model.Turn) turn {
	in := ""
	if t.Input != nil {
		b, _ := json.Marshal(t.Input)
		in = string(b)
	}
	return turn{Plan: t.Plan, Step: t.Step, Text: t.Text, Tool: t.Tool, Input: in, First: t.First}
}

const (
	gate     = "http://127.0.0.1:47312/gate/abc"
	leafTask = "Run curl --fail --silent " + gate + " with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. Do not read other files. Do not retry failures."
	load     = `{"max_results":2,"query":"select:mcp__t3-code__delegate_task,mcp__t3-code__task_status"}`
)

// TestRespondRealRequests plays each real request of a session of every
// scenario: each is answered with the step the CLI then ran (the next file
// of the session holds its result).
func TestRespondRealRequests(t *testing.T) {
	status := `{"taskId":"task-1"}`
	cases := []struct {
		file string
		want turn
	}{
		{"idle-1-load-tools", turn{Plan: "idle", Step: model.StepToolSearch, Tool: "ToolSearch", Input: load, First: true}},
		{"idle-2-delegate", turn{Plan: "idle", Step: model.StepDelegate, Tool: "mcp__t3-code__delegate_task", Input: mustJSON(map[string]any{"mode": "async", "task": leafTask})}},
		{"idle-3-release", turn{Plan: "idle", Step: model.StepRelease, Text: "PARENT_RELEASED"}},
		{"idle-4-wake", turn{Plan: "wake", Step: model.StepStatus, Tool: "mcp__t3-code__task_status", Input: status}},
		{"idle-5-ack", turn{Plan: "wake", Step: model.StepAnswer, Text: "ACK:SECRET-42"}},
		{"active-1-load-tools", turn{Plan: "active", Step: model.StepToolSearch, Tool: "ToolSearch", Input: load, First: true}},
		{"active-2-delegate", turn{Plan: "active", Step: model.StepDelegate, Tool: "mcp__t3-code__delegate_task", Input: mustJSON(map[string]any{"mode": "async", "task": leafTask})}},
		{"active-3-fetch-parent", turn{Plan: "active", Step: model.StepFetchParent, Tool: "Bash", Input: mustJSON(map[string]any{"command": "curl --fail --silent " + gate + "/parent", "description": "Keep the turn active until the completion arrives", "timeout": 600000})}},
		// The wake sent while the foreground Bash call ran: the CLI hands it
		// to the model as a system turn after the tool's result.
		{"active-4-wake-mid-turn", turn{Plan: "wake", Step: model.StepStatus, Tool: "mcp__t3-code__task_status", Input: status}},
		// Or inside that tool's result, in a reminder (the fixture server's
		// gate answers the /parent request as the wake is sent).
		{"active-4-wake-in-tool-result", turn{Plan: "wake", Step: model.StepStatus, Tool: "mcp__t3-code__task_status", Input: status}},
		{"active-5-ack", turn{Plan: "wake", Step: model.StepAnswer, Text: "ACK:SECRET-42"}},
		{"nested-child-1-load-tools", turn{Plan: "child", Step: model.StepToolSearch, Tool: "ToolSearch", Input: load}},
		{"nested-child-2-delegate", turn{Plan: "child", Step: model.StepDelegate, Tool: "mcp__t3-code__delegate_task", Input: mustJSON(map[string]any{"mode": "async", "task": leafTask})}},
		{"nested-child-3-release", turn{Plan: "child", Step: model.StepRelease, Text: "Delegated the task to a grandchild; waiting for its completion."}},
		{"nested-child-4-wake", turn{Plan: "wake", Step: model.StepStatus, Tool: "mcp__t3-code__task_status", Input: status}},
		// A delegated task answers the bare result.
		{"nested-child-5-answer", turn{Plan: "wake", Step: model.StepAnswer, Text: "SECRET-42"}},
		{"native-1-background", turn{Plan: "native", Step: model.StepBackground, Tool: "Bash", Input: mustJSON(map[string]any{"command": "curl --fail --silent " + gate, "description": "Fetch the gate URL in the background", "run_in_background": true}), First: true}},
		{"native-2-release", turn{Plan: "native", Step: model.StepRelease, Text: "PARENT_RELEASED"}},
		// The <task-notification> comes inside a <system-reminder>.
		{"native-3-notification", turn{Plan: "native-wake", Step: model.StepReadOutput, Tool: "Read", Input: mustJSON(map[string]any{"file_path": "/tmp/claude-0/-tmp-model-cap/b07f92c9-3d91-41ad-8c36-7d6d40cdebf6/tasks/bvrsp5m2e.output"})}},
		// Read numbers the lines and the file ends with the exit note.
		{"native-4-ack", turn{Plan: "native-wake", Step: model.StepAnswer, Text: "ACK:SECRET-42"}},
		{"child-1-fetch", turn{Plan: "child", Step: model.StepFetch, Tool: "Bash", Input: mustJSON(map[string]any{"command": "curl --fail --silent " + gate, "description": "Fetch the gate URL", "timeout": 600000})}},
		{"child-2-answer", turn{Plan: "child", Step: model.StepAnswer, Text: "SECRET-42"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			req := readRequest(t, c.file)
			if diff := cmp.Diff(c.want, flatten(model.Respond(req))); diff != "" {
				t.Errorf("turn (-want +got):\n%s", diff)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// conv builds a request from alternating turns: strings are user text,
// blocks are given as they are.
func conv(tools []string, msgs ...anthropic.Message) *anthropic.Request {
	req := &anthropic.Request{Model: "claude-sonnet-4-6", MaxTokens: 100, Stream: true, Messages: msgs}
	for _, n := range tools {
		req.Tools = append(req.Tools, anthropic.Tool{Name: n})
	}
	return req
}

func user(blocks ...anthropic.Block) anthropic.Message {
	return anthropic.Message{Role: anthropic.RoleUser, Content: blocks}
}

func assistant(blocks ...anthropic.Block) anthropic.Message {
	return anthropic.Message{Role: anthropic.RoleAssistant, Content: blocks}
}

func text(s string) anthropic.Block { return anthropic.Block{Type: anthropic.BlockText, Text: s} }

func use(id, name, input string) anthropic.Block {
	return anthropic.Block{Type: anthropic.BlockToolUse, ID: id, Name: name, Input: json.RawMessage(input)}
}

func result(id, content string, isErr bool) anthropic.Block {
	return anthropic.Block{Type: anthropic.BlockToolResult, ToolUseID: id, Content: anthropic.Content{text(content)}, IsError: isErr}
}

const reminder = "<system-reminder>\nThe task tools haven't been used recently. taskId curl --fail --silent http://127.0.0.1:1/x task_status\n</system-reminder>"

// TestRespondConversations covers what the real sessions did not: the
// CLI's additions in odd places, failures, missing tools, side requests.
func TestRespondConversations(t *testing.T) {
	mcp := []string{"Bash", "Read", "mcp__t3-code__delegate_task", "mcp__t3-code__task_status"}
	idle := "Use T3 delegate_task with mode=async to create exactly one child. Give the child this task: " + leafTask + " Immediately end your turn with exactly PARENT_RELEASED. When the completion notification arrives, use task_status to read the child result and reply with exactly ACK: followed by that result."
	wake := "Delegated task t-9 completed. Use task_status with taskId t-9 to read the result."
	cases := []struct {
		name string
		req  *anthropic.Request
		want turn
	}{
		{"reminders around the prompt", conv(mcp, user(text(reminder), text(idle), text(reminder))),
			turn{Plan: "idle", Step: model.StepDelegate, Tool: "mcp__t3-code__delegate_task", Input: mustJSON(map[string]any{"mode": "async", "task": leafTask}), First: true}},
		{"a reminder in a tool result is not an instruction", conv(mcp, user(text(idle)), assistant(use("t1", "mcp__t3-code__delegate_task", `{}`)), user(result("t1", `{"taskId":"t-9"}`+"\n"+reminder, false), text(reminder))),
			turn{Plan: "idle", Step: model.StepRelease, Text: "PARENT_RELEASED"}},
		{"delegation failed", conv(mcp, user(text(idle)), assistant(use("t1", "mcp__t3-code__delegate_task", `{}`)), user(result("t1", "target provider is not installed", true))),
			turn{Plan: "idle", Step: model.StepFailed, Text: "Delegation failed: target provider is not installed"}},
		{"an MCP tool of another server name", conv([]string{"Bash", "mcp__t3__delegate_task"}, user(text(idle))),
			turn{Plan: "idle", Step: model.StepDelegate, Tool: "mcp__t3__delegate_task", Input: mustJSON(map[string]any{"mode": "async", "task": leafTask}), First: true}},
		{"no delegate tool and nothing to load", conv([]string{"Bash"}, user(text(idle))),
			turn{Plan: "idle", Step: model.StepMissingTool, Text: "I cannot do this: the tool delegate_task is not available to me.", First: true}},
		{"a deferred tool is loaded once", conv([]string{"Bash", "ToolSearch"},
			user(text(idle)), anthropic.Message{Role: anthropic.RoleSystem, Content: anthropic.Content{text("Deferred tools:\nmcp__t3-code__delegate_task\n")}},
			assistant(use("t1", "ToolSearch", `{"query":"select:mcp__t3-code__delegate_task"}`)), user(result("t1", "no match", false))),
			turn{Plan: "idle", Step: model.StepMissingTool, Text: "I cannot do this: the tool delegate_task is not available to me."}},
		{"wake with cache_control and a reminder", conv(mcp, user(text(idle)), assistant(text("PARENT_RELEASED")), user(text(wake), text(reminder))),
			turn{Plan: "wake", Step: model.StepStatus, Tool: "mcp__t3-code__task_status", Input: `{"taskId":"t-9"}`}},
		{"task_status answer with a reminder", conv(mcp, user(text(idle)), assistant(text("PARENT_RELEASED")), user(text(wake)),
			assistant(use("s1", "mcp__t3-code__task_status", `{"taskId":"t-9"}`)), user(result("s1", `{"status":"completed","result":"R-1"}`+"\n\n"+reminder, false))),
			turn{Plan: "wake", Step: model.StepAnswer, Text: "ACK:R-1"}},
		{"task_status failed", conv(mcp, user(text(idle)), user(text(wake)),
			assistant(use("s1", "mcp__t3-code__task_status", `{"taskId":"t-9"}`)), user(result("s1", "Error POSTing to endpoint", true))),
			turn{Plan: "wake", Step: model.StepFailed, Text: "task_status failed: Error POSTing to endpoint"}},
		{"child gate failed", conv(mcp, user(text(leafTask)), assistant(use("b1", "Bash", `{"command":"curl --fail --silent `+gate+`"}`)), user(result("b1", "Exit code 22", true))),
			turn{Plan: "child", Step: model.StepFailed, Text: "Exit code 22"}},
		{"an unknown tool's error is passed over", conv(mcp, user(text(leafTask)), assistant(use("x1", model.UnknownTool, `{}`)), user(result("x1", "No such tool available: "+model.UnknownTool, true))),
			turn{Plan: "child", Step: model.StepFetch, Tool: "Bash", Input: mustJSON(map[string]any{"command": "curl --fail --silent " + gate, "description": "Fetch the gate URL", "timeout": 600000})}},
		{"notification with arrow-numbered output", conv(mcp, user(text("Use your native background Bash tool to run curl --fail --silent "+gate+" with run_in_background=true. End with PARENT_RELEASED; reply ACK:")),
			assistant(text("PARENT_RELEASED")),
			user(text("<system-reminder>\n<task-notification>\n<task-id>b1</task-id>\n<output-file>/tmp/b1.output</output-file>\n<status>completed</status>\n</task-notification>\n</system-reminder>")),
			assistant(use("r1", "Read", `{"file_path":"/tmp/b1.output"}`)), user(result("r1", "     1→S-2\n     2→[exited with code 0]\n     3→", false))),
			turn{Plan: "native-wake", Step: model.StepAnswer, Text: "ACK:S-2"}},
		{"no instruction", conv(mcp, user(text(reminder))), turn{Plan: "none", Step: model.StepReply, Text: "I found no task to run in this message."}},
		{"a question", conv(mcp, user(text("Say hi"))), turn{Plan: "none", Step: model.StepReply, Text: "I found no task to run in this message (6 characters)."}},
		{"a title request", &anthropic.Request{Model: "m", MaxTokens: 10, System: anthropic.Content{text("Write a 3-7 word title for this conversation.")}, Messages: []anthropic.Message{user(text("Say hi"))}},
			turn{Plan: "side", Step: model.StepReply, Text: "Background delivery check"}},
		{"a topic check", &anthropic.Request{Model: "m", MaxTokens: 10, System: anthropic.Content{text(`Answer {"isNewTopic": boolean, "title": string}`)}, Messages: []anthropic.Message{user(text("Say hi"))}},
			turn{Plan: "side", Step: model.StepReply, Text: `{"isNewTopic": false, "title": null}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, flatten(model.Respond(c.req))); diff != "" {
				t.Errorf("turn (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRespondIsPure: the same request always gets the same turn, and the
// answer's ids depend on the request's bytes only.
func TestRespondIsPure(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "requests"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".json")
		body, err := os.ReadFile(filepath.Join("testdata", "requests", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		a, b := readRequest(t, name), readRequest(t, name)
		ra, rb := model.Message(a, model.Respond(a), body), model.Message(b, model.Respond(b), body)
		if diff := cmp.Diff(ra, rb); diff != "" {
			t.Errorf("%s: two answers differ:\n%s", name, diff)
		}
		if other, dup := ids[ra.ID]; dup {
			t.Errorf("%s and %s got the same message id %s", name, other, ra.ID)
		}
		ids[ra.ID] = name
	}
}

// FuzzRespond: any request body is answered without a panic, and a turn
// calls only a tool the request offers.
func FuzzRespond(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "requests"))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata", "requests", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"<task-notification><output-file>x</output-file></task-notification>"}],"tools":[{"name":"Read"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, aerr := model.ParseRequest(body, true)
		if aerr != nil {
			return
		}
		turn := model.Respond(req)
		if turn.Plan == "" || turn.Step == "" {
			t.Fatalf("turn without a plan or step: %+v", turn)
		}
		if turn.Tool == "" {
			return
		}
		for _, tool := range req.Tools {
			if tool.Name == turn.Tool {
				return
			}
		}
		t.Fatalf("turn calls %q, which the request does not offer", turn.Tool)
	})
}
