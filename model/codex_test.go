package model_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/openai"
)

func readCodex(t *testing.T, name string) ([]byte, *openai.Request) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "responses", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	req, aerr := model.ParseResponsesRequest(b)
	if aerr != nil {
		t.Fatalf("%s: %v", name, aerr)
	}
	return b, req
}

// TestRespondCodexRealRequests plays every request of a real Codex
// 0.169.0 session per scenario (codex exec against this server, an MCP
// server with delegate_task and task_status, a gate; the child's gate
// answered after 40 s, so its exec_command yielded a session that was
// polled; the wake sent by codex exec resume): each gets the turn Codex
// then ran.
func TestRespondCodexRealRequests(t *testing.T) {
	for _, tc := range []struct {
		name, plan, step string
		ns, tool, args   string // the function call, or
		text             string // the message
	}{
		{"codex-idle-1-delegate", model.PlanIdle, model.StepDelegate, "mcp__t3_code", "delegate_task", `{"mode":"async","task":"Run curl --fail --silent http://127.0.0.1:PORT/gate/idle with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. Do not read other files. Do not retry failures."}`, ""},
		{"codex-idle-2-release", model.PlanIdle, model.StepRelease, "", "", "", "PARENT_RELEASED"},
		{"codex-child-1-fetch", model.PlanChild, model.StepFetch, "", model.CodexExec, `{"cmd":"curl --fail --silent http://127.0.0.1:PORT/gate/slow","yield_time_ms":30000}`, ""},
		{"codex-child-2-poll", model.PlanChild, model.StepPoll, "", model.CodexStdin, `{"chars":"","session_id":20868,"yield_time_ms":300000}`, ""},
		{"codex-child-3-answer", model.PlanChild, model.StepAnswer, "", "", "", "SECRET-123"},
		{"codex-wake-1-status", model.PlanWake, model.StepStatus, "mcp__t3_code", "task_status", `{"taskId":"task-1"}`, ""},
		{"codex-native-1-background", model.PlanNative, model.StepBackground, "", model.CodexExec, `{"cmd":"curl --fail --silent http://127.0.0.1:PORT/gate/slow","yield_time_ms":250}`, ""},
		{"codex-native-2-release", model.PlanNative, model.StepRelease, "", "", "", "PARENT_RELEASED"},
		{"codex-wake-2-answer", model.PlanWake, model.StepAnswer, "", "", "", "ACK:SECRET-123"},
		// The server's continuation after native's background command ended
		// (T3's codexBackgroundCommandDetail), as the fixture server sent it
		// to codex app-server 0.169.0 under verify --provider codex.
		{"codex-native-3-ack", model.PlanNativeWake, model.StepAnswer, "", "", "", "ACK:SECRET-123"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, req := readCodex(t, tc.name)
			turn, item := model.RespondCodex(req)
			if turn.Plan != tc.plan || turn.Step != tc.step {
				t.Errorf("plan/step %s/%s, want %s/%s", turn.Plan, turn.Step, tc.plan, tc.step)
			}
			got := [4]string{item.Namespace, item.Name, item.Arguments, item.Content.Text()}
			want := [4]string{tc.ns, tc.tool, tc.args, tc.text}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("item (-want +got):\n%s", d)
			}
			wantType := openai.ItemMessage
			if tc.tool != "" {
				wantType = openai.ItemFunctionCall
				if !req.Offers(tc.ns, tc.tool) {
					t.Errorf("the request does not offer %s/%s", tc.ns, tc.tool)
				}
			}
			if item.Type != wantType {
				t.Errorf("item type %q, want %q", item.Type, wantType)
			}
		})
	}
}

// TestRespondCodexConversations: conversations the real sessions did not
// reach: a failed delegation (as Codex 0.169.0 shows it), a command that failed, a background command,
// a wake that arrives while a foreground command is being polled, a
// request without the MCP tools.
func TestRespondCodexConversations(t *testing.T) {
	user := func(s string) openai.Item {
		return openai.Item{Type: openai.ItemMessage, Role: openai.RoleUser, Content: openai.Content{{Type: openai.PartInputText, Text: s}}}
	}
	fcall := func(id, ns, name, args string) openai.Item {
		return openai.Item{Type: openai.ItemFunctionCall, CallID: id, Namespace: ns, Name: name, Arguments: args}
	}
	out := func(id, s string) openai.Item {
		return openai.Item{Type: openai.ItemFunctionCallOutput, CallID: id, Output: openai.Output{Text: s}}
	}
	mcpOut := func(id, s string) openai.Item {
		return openai.Item{Type: openai.ItemFunctionCallOutput, CallID: id, Output: openai.Output{Parts: openai.Content{{Type: "input_text", Text: "Wall time: 0.01 seconds\nOutput:"}, {Type: "input_text", Text: s}}}}
	}
	_, base := readCodex(t, "codex-idle-1-delegate")
	tools := base.Tools
	var shellOnly []openai.Tool
	for _, tl := range tools {
		if tl.Type == openai.ToolFunction {
			shellOnly = append(shellOnly, tl)
		}
	}
	idle := "This is a live background-delivery verification. Use T3 delegate_task with mode=async to create exactly one child using provider codex, model m. Give the child this task: Run curl --fail --silent http://g/gate with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. Immediately end your turn with exactly PARENT_RELEASED."
	active := "This is a live background-delivery verification. Use T3 delegate_task with mode=async to create exactly one child using provider codex, model m. Give the child this task: Run curl --fail --silent http://g/gate with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. After delegating, run curl --fail --silent http://g/gate/parent in your foreground terminal tool."
	native := "This is a live background-delivery verification. Use your native background Bash tool to run curl --fail --silent http://g/gate with run_in_background=true. Do not delegate a T3 child. Immediately end your turn with exactly PARENT_RELEASED."
	child := "Run curl --fail --silent http://g/gate with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer."
	wake := "Delegated task t-9 completed. Use task_status with taskId t-9 to read the result."
	cont := "Background command completed (exit 0): curl --fail --silent http://g/gate"
	for _, tc := range []struct {
		name       string
		tools      []openai.Tool
		input      []openai.Item
		step, item string
	}{
		// Codex 0.169.0 hands an MCP result with isError to the model as
		// its text alone, with no mark: the plan cannot tell it failed.
		{"an MCP error has no mark", tools, []openai.Item{user(idle), fcall("c1", "mcp__t3_code", "delegate_task", `{}`), mcpOut("c1", "no active run")}, model.StepRelease, "message PARENT_RELEASED"},
		// codex app-server 0.169.0 hands an MCP result over as one text,
		// its "Wall time" head first (T3 0.0.33's task_status: the result
		// is its summary).
		{"an MCP result as one text", tools, []openai.Item{user(idle), fcall("c1", "mcp__t3_code", "delegate_task", `{}`), mcpOut("c1", `{"taskId":"t-9"}`), user(wake), fcall("c2", "mcp__t3_code", "task_status", `{"taskId":"t-9"}`), out("c2", "Wall time: 0.0585 seconds\nOutput:\n{\"taskId\":\"t-9\",\"status\":\"completed\",\"summary\":\"RESULT_x\"}")}, model.StepAnswer, "message ACK:RESULT_x"},
		{"child command failed", tools, []openai.Item{user(child), fcall("c1", "", "exec_command", `{"cmd":"curl --fail --silent http://g/gate"}`), out("c1", "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 22\nOutput:\ncurl: (22) 404")}, model.StepFailed, "message curl: (22) 404"},
		{"active fetches the parent gate", tools, []openai.Item{user(active), fcall("c1", "mcp__t3_code", "delegate_task", `{}`), mcpOut("c1", `{"taskId":"t-9"}`)}, model.StepFetchParent, `call /exec_command {"cmd":"curl --fail --silent http://g/gate/parent","yield_time_ms":30000}`},
		{"active polls the parent gate", tools, []openai.Item{user(active), fcall("c1", "mcp__t3_code", "delegate_task", `{}`), mcpOut("c1", `{"taskId":"t-9"}`), fcall("c2", "", "exec_command", `{"cmd":"curl --fail --silent http://g/gate/parent","yield_time_ms":30000}`), out("c2", "Wall time: 30 seconds\nProcess running with session ID 7\nOutput:\n")}, model.StepPoll, `call /write_stdin {"chars":"","session_id":7,"yield_time_ms":300000}`},
		{"a wake while polling", tools, []openai.Item{user(active), fcall("c1", "mcp__t3_code", "delegate_task", `{}`), mcpOut("c1", `{"taskId":"t-9"}`), fcall("c2", "", "exec_command", `{"cmd":"curl --fail --silent http://g/gate/parent","yield_time_ms":30000}`), out("c2", "Wall time: 30 seconds\nProcess running with session ID 7\nOutput:\n"), user(wake)}, model.StepStatus, `call mcp__t3_code/task_status {"taskId":"t-9"}`},
		{"native runs in the background", tools, []openai.Item{user(native)}, model.StepBackground, `call /exec_command {"cmd":"curl --fail --silent http://g/gate","yield_time_ms":250}`},
		{"native releases a running background command", tools, []openai.Item{user(native), fcall("c1", "", "exec_command", `{"cmd":"curl --fail --silent http://g/gate","yield_time_ms":250}`), out("c1", "Wall time: 0.25 seconds\nProcess running with session ID 8\nOutput:\n")}, model.StepRelease, "message PARENT_RELEASED"},
		// T3's continuation when the background command ends
		// (codexBackgroundCommandDetail): the answer is read from its
		// output tail, else from what the command printed when it yielded.
		{"native's continuation carries the output tail", tools, []openai.Item{user(native), fcall("c1", "", "exec_command", `{"cmd":"curl --fail --silent http://g/gate","yield_time_ms":250}`), out("c1", "Wall time: 0.25 seconds\nProcess running with session ID 8\nOutput:\n"), user(cont + "\n\nOutput tail:\nSECRET-9")}, model.StepAnswer, "message ACK:SECRET-9"},
		{"native's continuation without a tail", tools, []openai.Item{user(native), fcall("c1", "", "exec_command", `{"cmd":"curl --fail --silent http://g/gate","yield_time_ms":250}`), out("c1", "Wall time: 0.25 seconds\nProcess running with session ID 8\nOutput:\nSECRET-8"), user("Background command completed (exit 0): /bin/bash -lc 'curl --fail --silent http://g/gate'")}, model.StepAnswer, "message ACK:SECRET-8"},
		{"native's continuation with nothing to read", tools, []openai.Item{user(native), fcall("c1", "", "exec_command", `{"cmd":"curl --fail --silent http://g/gate","yield_time_ms":250}`), out("c1", "Wall time: 0.25 seconds\nProcess running with session ID 8\nOutput:\n"), user(cont)}, model.StepFailed, "message The background command's output did not arrive: curl --fail --silent http://g/gate"},
		{"native's command failed", tools, []openai.Item{user(native), user("Background command completed (exit 22): curl --fail --silent http://g/gate\n\nOutput tail:\ncurl: (22) 404")}, model.StepFailed, "message The background command failed (exit 22): curl: (22) 404"},
		{"no MCP tools", shellOnly, []openai.Item{user(idle)}, model.StepMissingTool, "message I cannot do this: the tool delegate_task is not available to me."},
		{"Codex's context is not the instruction", tools, []openai.Item{user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"), user(child)}, model.StepFetch, `call /exec_command {"cmd":"curl --fail --silent http://g/gate","yield_time_ms":30000}`},
		{"nothing to do", tools, []openai.Item{user("hello")}, model.StepReply, "message I found no task to run in this message (5 characters)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turn, item := model.RespondCodex(&openai.Request{Model: "m", Tools: tc.tools, Input: tc.input})
			got := "message " + item.Content.Text()
			if item.Type == openai.ItemFunctionCall {
				got = "call " + item.Namespace + "/" + item.Name + " " + item.Arguments
			}
			if turn.Step != tc.step || got != tc.item {
				t.Errorf("step %s, item %s\nwant %s, %s", turn.Step, got, tc.step, tc.item)
			}
		})
	}
}

func postResponses(t *testing.T, url string, body []byte, auth bool) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+model.ResponsesPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth {
		req.Header.Set("Authorization", "Bearer test-key")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestServeResponsesStreamed: over a real loopback server, the streamed
// answers to real requests are the goldens, read back without a problem,
// and the same request gets the same bytes.
func TestServeResponsesStreamed(t *testing.T) {
	s := startModel(t, "")
	for _, name := range []string{"codex-idle-1-delegate", "codex-child-3-answer"} {
		t.Run(name, func(t *testing.T) {
			body, _ := readCodex(t, name)
			resp := postResponses(t, s.URL(), body, true)
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
			testkit.Golden(t, filepath.Join("testdata", "responses-sse", name+".sse"), raw)
			a, problems, err := openai.Assemble(bytes.NewReader(raw))
			if err != nil || len(problems) > 0 || !a.Complete() {
				t.Fatalf("err %v problems %v complete %v", err, problems, a.Complete())
			}
			if n := len(a.Response().Output); n != 1 {
				t.Errorf("%d output items", n)
			}
			// Codex 0.169.0 logs "OutputTextDelta without active item" and
			// drops the deltas when an added message item has no content
			// array.
			if a.Response().Output[0].Type == openai.ItemMessage && !bytes.Contains(raw, []byte(`"role":"assistant","content":[]`)) {
				t.Errorf("the added message item has no empty content array:\n%s", raw)
			}
			again, _ := io.ReadAll(postResponses(t, s.URL(), body, true).Body)
			if !bytes.Equal(raw, again) {
				t.Error("the same request got another answer")
			}
		})
	}
}

func TestServeResponsesErrors(t *testing.T) {
	s := startModel(t, "")
	good, _ := readCodex(t, "codex-idle-2-release")
	for _, tc := range []struct {
		name   string
		body   string
		auth   bool
		status int
		typ    string
		param  string
	}{
		{"no key", string(good), false, 401, openai.ErrAuthentication, ""},
		{"not JSON", "{", true, 400, openai.ErrInvalidRequest, ""},
		{"no model", `{"input":"hi"}`, true, 400, openai.ErrInvalidRequest, "model"},
		{"no input", `{"model":"m"}`, true, 400, openai.ErrInvalidRequest, "input"},
		{"call without call_id", `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, true, 400, openai.ErrInvalidRequest, "input[0].call_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := postResponses(t, s.URL(), []byte(tc.body), tc.auth)
			b, _ := io.ReadAll(resp.Body)
			e := openai.ParseError(b)
			if resp.StatusCode != tc.status || e == nil || e.Type != tc.typ {
				t.Fatalf("status %d body %s, want %d %s", resp.StatusCode, b, tc.status, tc.typ)
			}
			param := ""
			if e.Param != nil {
				param = *e.Param
			}
			if param != tc.param {
				t.Errorf("param %q, want %q", param, tc.param)
			}
		})
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL()+model.ResponsesPath, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	nonStream := bytes.Replace(good, []byte(`"stream": true`), []byte(`"stream": false`), 1)
	r2 := postResponses(t, s.URL(), nonStream, true)
	var doc openai.Response
	if err := json.NewDecoder(r2.Body).Decode(&doc); err != nil || doc.Status != openai.StatusCompleted || len(doc.Output) != 1 || doc.Output[0].Content.Text() != "PARENT_RELEASED" {
		t.Errorf("not streamed: %v %+v", err, doc)
	}
}

// TestResponsesFaults: each fault strikes the launch prompt's first call
// once, in the Responses API's terms.
func TestResponsesFaults(t *testing.T) {
	body, _ := readCodex(t, "codex-idle-1-delegate")
	for _, tc := range []struct {
		fault string
		check func(t *testing.T, status int, raw []byte)
	}{
		{model.FaultMalformedEvent, func(t *testing.T, status int, raw []byte) {
			_, problems, _ := openai.Assemble(bytes.NewReader(raw))
			if len(problems) == 0 || problems[0].Kind != openai.ProblemMalformed {
				t.Errorf("problems %v", problems)
			}
		}},
		{model.FaultStreamCut, func(t *testing.T, status int, raw []byte) {
			a, _, _ := openai.Assemble(bytes.NewReader(raw))
			if a.Complete() {
				t.Error("a cut stream completed")
			}
		}},
		{model.FaultOverloaded, func(t *testing.T, status int, raw []byte) {
			if e := openai.ParseError(raw); status != 503 || e == nil || e.Type != openai.ErrServer {
				t.Errorf("status %d body %s", status, raw)
			}
		}},
		{model.FaultUnknownTool, func(t *testing.T, status int, raw []byte) {
			a, _, _ := openai.Assemble(bytes.NewReader(raw))
			if out := a.Response().Output; len(out) != 1 || out[0].Name != model.UnknownTool {
				t.Errorf("output %+v", out)
			}
		}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			s := startModel(t, tc.fault)
			resp := postResponses(t, s.URL(), body, true)
			raw, _ := io.ReadAll(resp.Body)
			tc.check(t, resp.StatusCode, raw)
			again := postResponses(t, s.URL(), body, true)
			raw2, _ := io.ReadAll(again.Body)
			if a, problems, _ := openai.Assemble(bytes.NewReader(raw2)); again.StatusCode != 200 || len(problems) > 0 || !a.Complete() || a.Response().Output[0].Name != "delegate_task" {
				t.Errorf("the retry: status %d problems %v", again.StatusCode, problems)
			}
		})
	}
}
