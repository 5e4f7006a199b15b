package openai_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/model/openai"
)

func readRequest(t *testing.T, name string) *openai.Request {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var r openai.Request
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &r
}

// TestCapturedRequests reads real requests of Codex 0.169.0: the tools
// (an MCP server's under its namespace), and the function call and its
// output (a list of parts for an MCP tool).
func TestCapturedRequests(t *testing.T) {
	r1 := readRequest(t, "codex-mcp-1.json")
	if !r1.Stream || r1.Model == "" {
		t.Errorf("stream %v model %q", r1.Stream, r1.Model)
	}
	for _, f := range [][2]string{{"", "exec_command"}, {"", "write_stdin"}, {"mcp__t3_code", "delegate_task"}, {"mcp__t3_code", "task_status"}} {
		if !r1.Offers(f[0], f[1]) {
			t.Errorf("request does not offer %v; functions %v", f, r1.Functions())
		}
	}
	if r1.Offers("", "delegate_task") {
		t.Error("an MCP tool offered outside its namespace")
	}
	r2 := readRequest(t, "codex-mcp-2.json")
	var got []string
	for _, it := range r2.Input {
		switch it.Type {
		case openai.ItemMessage:
			got = append(got, it.Role)
		case openai.ItemFunctionCall:
			got = append(got, "call "+it.Namespace+"/"+it.Name+" "+it.CallID+" "+it.Arguments)
		case openai.ItemFunctionCallOutput:
			got = append(got, "output "+it.CallID+" "+it.Output.String())
		}
	}
	want := []string{"developer", "developer", "user", "user",
		`call mcp__t3_code/delegate_task call_1 {"task":"x","mode":"async"}`,
		"output call_1 Wall time: 0.0120 seconds\nOutput:\n" + `{"taskId": "task-1", "status": "running"}`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
}

func TestInputShapes(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       openai.Input
		err        string
	}{
		{"string", `"hi"`, openai.Input{{Type: "message", Role: "user", Content: openai.Content{{Type: "input_text", Text: "hi"}}}}, ""},
		{"items", `[{"type":"function_call_output","call_id":"c","output":"ok"}]`, openai.Input{{Type: "function_call_output", CallID: "c", Output: openai.Output{Text: "ok"}}}, ""},
		{"content string", `[{"type":"message","role":"user","content":"yo"}]`, openai.Input{{Type: "message", Role: "user", Content: openai.Content{{Type: "input_text", Text: "yo"}}}}, ""},
		{"number", `7`, nil, "cannot unmarshal number into Go value of type openai.Input"},
		{"bad output", `[{"type":"function_call_output","output":7}]`, nil, "Item.output of type openai.Output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in openai.Input
			err := json.Unmarshal([]byte(tc.body), &in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, in); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func sampleResponse() *openai.Response {
	return &openai.Response{ID: "resp_1", Object: "response", CreatedAt: 1, Status: openai.StatusCompleted, Model: "m",
		Output: []openai.Item{
			{Type: openai.ItemMessage, ID: "msg_1", Role: openai.RoleAssistant, Status: openai.StatusCompleted, Content: openai.Content{{Type: openai.PartOutputText, Text: "Delegating the task now — ✓"}}},
			{Type: openai.ItemFunctionCall, ID: "fc_1", CallID: "call_1", Namespace: "mcp__t3_code", Name: "delegate_task", Arguments: `{"task":"fetch the gate","mode":"async"}`, Status: openai.StatusCompleted},
		},
		Usage: &openai.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}}
}

func write(t *testing.T, evs []openai.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	sw := openai.NewStreamWriter(&buf)
	for _, ev := range evs {
		if err := sw.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestRoundTrip: a written stream reads back to the response, with no
// problem.
func TestRoundTrip(t *testing.T) {
	resp := sampleResponse()
	a, problems, err := openai.Assemble(bytes.NewReader(write(t, openai.Events(resp, &openai.StreamOptions{DeltaBytes: 5}))))
	if err != nil || len(problems) > 0 {
		t.Fatalf("err %v problems %v", err, problems)
	}
	if !a.Complete() {
		t.Error("not complete")
	}
	if d := cmp.Diff(resp, a.Response()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestGrammarBreaks: each break of the grammar is named.
func TestGrammarBreaks(t *testing.T) {
	evs := openai.Events(sampleResponse(), nil)
	idx := func(typ string) int {
		for k, e := range evs {
			if e.Type == typ {
				return k
			}
		}
		t.Fatalf("no %s", typ)
		return -1
	}
	drop := func(k int) []openai.Event { return append(append([]openai.Event{}, evs[:k]...), evs[k+1:]...) }
	raw := func(evs []openai.Event, at int, name, data string) []byte {
		var buf bytes.Buffer
		buf.Write(write(t, evs[:at]))
		buf.WriteString("event: " + name + "\ndata: " + data + "\n\n")
		buf.Write(write(t, evs[at:]))
		return buf.Bytes()
	}
	badArgs := append([]openai.Event{}, evs...)
	k := idx(openai.EventOutputItemDone)
	for k2 := range badArgs {
		if badArgs[k2].Type == openai.EventOutputItemDone && badArgs[k2].Item.Type == openai.ItemFunctionCall {
			it := *badArgs[k2].Item
			it.Arguments = `{"task":`
			badArgs[k2].Item = &it
		}
	}
	for _, tc := range []struct {
		name     string
		body     []byte
		want     []string
		complete bool
	}{
		{"no created", write(t, drop(0)), []string{"order response.in_progress: before response.created"}, true},
		{"item not added", write(t, drop(idx(openai.EventOutputItemAdded))), nil, true},
		{"malformed data", raw(evs, 3, openai.EventOutputTextDelta, "{not json"), []string{"malformed response.output_text.delta"}, true},
		{"name and type differ", raw(evs, 3, openai.EventOutputTextDelta, `{"type":"response.output_text.done","output_index":0}`), []string{"malformed response.output_text.delta"}, true},
		{"after completed", raw(evs, len(evs), openai.EventOutputTextDelta, `{"type":"response.output_text.delta","output_index":0}`), []string{"order response.output_text.delta: after response.completed"}, true},
		{"arguments not JSON", write(t, badArgs), []string{"malformed response.output_item.done"}, true},
		{"cut", write(t, evs[:k]), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, problems, err := openai.Assemble(bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.Kind+" "+p.Error())
			}
			if tc.name == "item not added" {
				if len(got) == 0 || !strings.Contains(got[0], "which is not open") {
					t.Errorf("problems %q, want one naming an item not open", got)
				}
			} else if len(tc.want) != len(got) {
				t.Fatalf("problems %q, want %q", got, tc.want)
			} else {
				for i := range got {
					if !strings.HasPrefix(got[i], tc.want[i]) {
						t.Errorf("problem %q, want prefix %q", got[i], tc.want[i])
					}
				}
			}
			if a.Complete() != tc.complete {
				t.Errorf("complete %v, want %v", a.Complete(), tc.complete)
			}
		})
	}
}

func TestErrorShape(t *testing.T) {
	e := openai.NewError(400, openai.ErrInvalidRequest, "model: required", "model")
	b, _ := json.Marshal(openai.ErrorResponse{Error: e.Body})
	if got, want := string(b), `{"error":{"message":"model: required","type":"invalid_request_error","param":"model","code":null}}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if p := openai.ParseError(b); p == nil || p.Message != "model: required" {
		t.Errorf("ParseError %+v", p)
	}
	if openai.ParseError([]byte(`{"id":"resp_1"}`)) != nil {
		t.Error("a response parsed as an error")
	}
}

// FuzzAssemble: any stream is read without panicking, and every problem
// is of a known kind.
func FuzzAssemble(f *testing.F) {
	var buf bytes.Buffer
	sw := openai.NewStreamWriter(&buf)
	for _, ev := range openai.Events(sampleResponse(), nil) {
		_ = sw.Write(ev)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("event: response.created\ndata: {\"type\":\"response.created\"}\n\n"))
	f.Add([]byte("data: {\"type\":\"error\",\"code\":\"x\"}\r\n\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, problems, err := openai.Assemble(bytes.NewReader(body))
		if err != nil {
			return
		}
		for _, p := range problems {
			if p.Kind != openai.ProblemMalformed && p.Kind != openai.ProblemOrder {
				t.Fatalf("problem of kind %q", p.Kind)
			}
		}
	})
}
