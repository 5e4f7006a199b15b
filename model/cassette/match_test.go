package cassette

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func shape(t *testing.T, body string) *Shape {
	t.Helper()
	s, err := ParseShape("/v1/messages", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMatch: what is matched (messages, tools, model, stream) and what is
// bound (run-bound values at the same place), with the first difference's
// path when they do not match.
func TestMatch(t *testing.T) {
	const gate = `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"curl http://127.0.0.1:4000/0b7cf1a2-3d4e-4f50-8a6b-7c8d9e0f1a2b in /tmp/wireproof-run-1-2"}]}`
	for _, tc := range []struct {
		name, rec, live string
		bind            Bindings
		path            string
	}{
		{name: "run-bound values bound", rec: gate,
			live: `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"system":"other","metadata":{"user_id":"x"},"messages":[{"role":"user","content":[{"type":"text","text":"curl http://127.0.0.1:5000/b330e73c-abad-488c-888b-d0069d6f5f5e in /tmp/wireproof-run-3-4","cache_control":{"type":"ephemeral"}}]}]}`,
			bind: Bindings{"127.0.0.1:4000": "127.0.0.1:5000", "0b7cf1a2-3d4e-4f50-8a6b-7c8d9e0f1a2b": "b330e73c-abad-488c-888b-d0069d6f5f5e", "/tmp/wireproof-run-1-2": "/tmp/wireproof-run-3-4"}},
		{name: "the CLI's background task id and a slug of the run directory", rec: `{"model":"m","messages":[{"role":"user","content":"ID: bzjc3l8io. Output: /tmp/wireproof-run-5802-6584/provider-home/tmp/claude-0/-tmp-wireproof-run-5802-6584/tasks/bzjc3l8io.output"}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"ID: bffl1pmj3. Output: /tmp/wireproof-run-7159-6593/provider-home/tmp/claude-0/-tmp-wireproof-run-7159-6593/tasks/bffl1pmj3.output"}]}`,
			bind: Bindings{"bzjc3l8io": "bffl1pmj3", "/tmp/wireproof-run-5802-6584": "/tmp/wireproof-run-7159-6593",
				"/tmp/claude-0/-tmp-wireproof-run-5802-6584": "/tmp/claude-0/-tmp-wireproof-run-7159-6593"}},
		{name: "a background task id of letters alone, and that id again in a later message", rec: `{"model":"m","messages":[{"role":"user","content":"ID: bkvvjqois. Output: /tmp/wireproof-run-5802-6584/tasks/bkvvjqois.output"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_wpAAAAAAAAAA","name":"TaskOutput","input":{"task_id":"bkvvjqois"}}]}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"ID: b10aumf3f. Output: /tmp/wireproof-run-7159-6593/tasks/b10aumf3f.output"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_wpBBBBBBBBBB","name":"TaskOutput","input":{"task_id":"b10aumf3f"}}]}]}`,
			bind: Bindings{"bkvvjqois": "b10aumf3f", "/tmp/wireproof-run-5802-6584": "/tmp/wireproof-run-7159-6593", "toolu_wpAAAAAAAAAA": "toolu_wpBBBBBBBBBB"}},
		{name: "a background task id of letters alone live", rec: `{"model":"m","messages":[{"role":"user","content":"ID: b10aumf3f, b10aumf3f"}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"ID: bkvvjqois, bkvvjqois"}]}`,
			bind: Bindings{"b10aumf3f": "bkvvjqois"}},
		{name: "a word of letters after ID: once is not another", rec: `{"model":"m","messages":[{"role":"user","content":"ID: bkvvjqois, say alpha"}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"ID: bkvvjqois, say gamma"}]}`,
			path: "messages[0].content[0].text"},
		{name: "a number of four digits", rec: `{"model":"m","messages":[{"role":"user","content":"pid 5802 and 12"}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"pid 7159 and 12"}]}`,
			bind: Bindings{"5802": "7159"}},
		{name: "a number of fewer digits is text", rec: `{"model":"m","messages":[{"role":"user","content":"pid 580"}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"pid 715"}]}`,
			path: "messages[0].content[0].text"},
		{name: "a word of letters is text", rec: `{"model":"m","messages":[{"role":"user","content":"say alpha"}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"say gamma"}]}`,
			path: "messages[0].content[0].text"},
		{name: "a redacted secret bound from the live conversation", rec: `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_wpAAAAAAAAAA","content":"the key is [REDACTED]."}]}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_wpBBBBBBBBBB","content":"the key is s3cr3t-of-this-run."}]}]}`,
			bind: Bindings{"[REDACTED]": "s3cr3t-of-this-run", "toolu_wpAAAAAAAAAA": "toolu_wpBBBBBBBBBB"}},
		{name: "a redacted secret, the rest changed", rec: `{"model":"m","messages":[{"role":"user","content":"the key is [REDACTED]."}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"the code is abc."}]}`,
			path: "messages[0].content[0].text"},
		{name: "a changed word", rec: gate,
			live: `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"wget http://127.0.0.1:5000/b330e73c-abad-488c-888b-d0069d6f5f5e in /tmp/x"}]}`,
			path: "messages[0].content[0].text"},
		{name: "another host", rec: gate,
			live: `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"curl http://localhost:5000/b330e73c-abad-488c-888b-d0069d6f5f5e in /tmp/wireproof-run-3-4"}]}`,
			path: "messages[0].content[0].text"},
		{name: "a tool more", rec: gate,
			live: `{"model":"m","stream":true,"tools":[{"name":"Bash"},{"name":"Read"}],"messages":[{"role":"user","content":"curl http://127.0.0.1:4000/0b7cf1a2-3d4e-4f50-8a6b-7c8d9e0f1a2b in /tmp/wireproof-run-1-2"}]}`,
			path: "tools[1]"},
		{name: "another model", rec: gate,
			live: `{"model":"n","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"curl http://127.0.0.1:4000/0b7cf1a2-3d4e-4f50-8a6b-7c8d9e0f1a2b in /tmp/wireproof-run-1-2"}]}`,
			path: "model"},
		{name: "a message more", rec: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`,
			path: "messages[1]"},
		{name: "one recorded id bound to two", rec: `{"model":"m","messages":[{"role":"user","content":"toolu_wpAAAAAAAAAA toolu_wpAAAAAAAAAA"}]}`,
			live: `{"model":"m","messages":[{"role":"user","content":"toolu_wpBBBBBBBBBB toolu_wpCCCCCCCCCC"}]}`,
			path: "messages[0].content[0].text"},
		{name: "ids bound across messages", rec: `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_wpAAAAAAAAAA","name":"Bash","input":{"command":"ls"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_wpAAAAAAAAAA","content":"ok"}]}]}`,
			live: `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_wpBBBBBBBBBB","name":"Bash","input":{"command":"ls"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_wpBBBBBBBBBB","content":"ok"}]}]}`,
			bind: Bindings{"toolu_wpAAAAAAAAAA": "toolu_wpBBBBBBBBBB"}},
		{name: "a tool_result answering another id", rec: `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_wpAAAAAAAAAA","name":"Bash","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_wpAAAAAAAAAA","content":"ok"}]}]}`,
			live: `{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_wpBBBBBBBBBB","name":"Bash","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_wpCCCCCCCCCC","content":"ok"}]}]}`,
			path: "messages[1].content[0].tool_use_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkMatch(t, shape(t, tc.rec), shape(t, tc.live), tc.bind, tc.path)
		})
	}
}

// checkMatch matches live against rec and wants the first difference at
// path, or (path "") a match whose bindings that change a value are bind.
func checkMatch(t *testing.T, rec, live *Shape, bind Bindings, path string) Bindings {
	t.Helper()
	got, d := Match(rec, live)
	if path != "" {
		if d == nil || d.Path != path {
			t.Fatalf("diff %v, want one at %s", d, path)
		}
		return nil
	}
	if d != nil {
		t.Fatalf("no match: %s", d)
	}
	changed := Bindings{}
	for k, v := range got {
		if k != v {
			changed[k] = v
		}
	}
	if diff := cmp.Diff(bind, changed); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	return got
}

// TestApply: the longest recorded value is replaced first.
func TestApply(t *testing.T) {
	b := Bindings{"127.0.0.1:4000": "127.0.0.1:5000", "/tmp/a": "/tmp/b", "same": "same"}
	if got := b.Apply("curl http://127.0.0.1:4000/x > /tmp/a/out same"); got != "curl http://127.0.0.1:5000/x > /tmp/b/out same" {
		t.Errorf("got %q", got)
	}
}

// FuzzMatch: any two bodies parse or fail cleanly, a body matches itself
// with every binding the identity, and a diff's path is never empty.
func FuzzMatch(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"curl http://127.0.0.1:4000/0b7cf1a2-3d4e-4f50-8a6b-7c8d9e0f1a2b"}]}`), []byte(`{"model":"m","messages":[]}`))
	f.Add([]byte(`{"messages":"x"}`), []byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, a, b []byte) { fuzzMatch(t, "/v1/messages", a, b) })
}

// fuzzMatch is a fuzz target's body: a and b, requests at path, parse or
// fail cleanly; a parsed one matches itself with every binding the
// identity; a diff of a against b has a path.
func fuzzMatch(t *testing.T, path string, a, b []byte) {
	sa, err := ParseShape(path, a)
	if err != nil {
		return
	}
	bind, d := Match(sa, sa)
	if d != nil {
		t.Fatalf("a body does not match itself: %s", d)
	}
	for k, v := range bind {
		if k != v {
			t.Fatalf("self-match bound %q to %q", k, v)
		}
	}
	sb, err := ParseShape(path, b)
	if err != nil {
		return
	}
	if _, d := Match(sa, sb); d != nil && d.Path == "" {
		t.Fatalf("a diff without a path: %+v", d)
	}
}

// TestTokenize: the run-bound tokens of a string.
func TestTokenize(t *testing.T) {
	got := tokenize(`cd /tmp/TestX123/001/wireproof-run-1-2/provider-home && curl http://127.0.0.1:45803/02108642-b54b-4d06-83c6-73d0657f0ff0 at 2026-12-01T14:07:14.5Z (toolu_wp5a6511b1c78f09285170c1) /tmp/model-cap`, nil)
	want := []segment{{text: "cd "}, {class: "tmp", text: "/tmp/TestX123/001/wireproof-run-1-2"}, {text: "/provider-home && curl http://"},
		{class: "port", text: "127.0.0.1:45803"}, {text: "/"}, {class: "uuid", text: "02108642-b54b-4d06-83c6-73d0657f0ff0"}, {text: " at "},
		{class: "time", text: "2026-12-01T14:07:14.5Z"}, {text: " ("}, {class: "id", text: "toolu_wp5a6511b1c78f09285170c1"}, {text: ") /tmp/model-cap"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(segment{})); diff != "" {
		t.Errorf("tokenize (-want +got):\n%s", diff)
	}
}

func responsesShape(t *testing.T, body string) *Shape {
	t.Helper()
	s, err := ParseShape(ResponsesPath, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMatchResponses: a Responses request matches by model, tools' names,
// instructions and input items, with the Codex CLI's run-bound values
// (item and call ids, exec sessions, wall times, ports, the secret) bound
// and the first difference's path when it does not match.
func TestMatchResponses(t *testing.T) {
	const (
		tools = `"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"mcp__t3_code","tools":[{"type":"function","name":"delegate_task"}]},{"type":"web_search"}]`
		call  = `{"type":"function_call","id":"fc_wpAAAAAAAAAA","name":"exec_command","arguments":"{\"cmd\":\"curl http://127.0.0.1:4000/gate\"}","call_id":"call_wpAAAAAAAAAA"}`
		out   = `{"type":"function_call_output","id":"fco_01a231f3-0f7e-7692-a20e-06b9602f68fa","call_id":"call_wpAAAAAAAAAA","output":"Chunk ID: e24fe8\nWall time: 30.0011 seconds\nProcess running with session ID 20868\nOutput:\n"}`
		poll  = `{"type":"function_call","id":"fc_wpCCCCCCCCCC","name":"write_stdin","arguments":"{\"chars\":\"\",\"session_id\":20868}","call_id":"call_wpCCCCCCCCCC"}`
		done  = `{"type":"function_call_output","call_id":"call_wpCCCCCCCCCC","output":[{"type":"input_text","text":"Wall time: 1.5 seconds\nOutput:\nRESULT_80c90278-b1cd-4c11-bfe0-24039d04592f"}]}`
		rec   = `{"model":"gpt-5-codex","stream":true,"instructions":"be brief",` + tools + `,"prompt_cache_key":"01a231f2-9562-7b11-80de-047786014f0f","input":[{"type":"message","id":"msg_01a231f2-966f-7c22-9b22-b3812ca487f6","role":"user","content":"run it on 2026-12-01"},` + call + `,` + out + `,` + poll + `,` + done + `]}`
	)
	live := strings.NewReplacer("4000", "5111", "fc_wpAAAAAAAAAA", "fc_wpBBBBBBBBBB", "call_wpAAAAAAAAAA", "call_wpBBBBBBBBBB",
		"01a231f", "01b7772", "e24fe8", "9f0a1b", "30.0011", "0.2", "20868", "7", "1.5", "9.25", "80c90278-b1cd-4c11-bfe0-24039d04592f", "5f0e2a11-9c3d-4e8f-a1b2-c3d4e5f60718",
		"2026-12-01", "2026-12-02").Replace(rec)
	for _, tc := range []struct {
		name, rec, live string
		bind            Bindings
		path            string
	}{
		{name: "run-bound values bound", rec: rec, live: live, bind: Bindings{
			"127.0.0.1:4000": "127.0.0.1:5111", "fc_wpAAAAAAAAAA": "fc_wpBBBBBBBBBB", "call_wpAAAAAAAAAA": "call_wpBBBBBBBBBB",
			"msg_01a231f2-966f-7c22-9b22-b3812ca487f6": "msg_01b77722-966f-7c22-9b22-b3812ca487f6",
			"fco_01a231f3-0f7e-7692-a20e-06b9602f68fa": "fco_01b77723-0f7e-7692-a20e-06b9602f68fa",
			"e24fe8": "9f0a1b", "session ID 20868": "session ID 7", "2026-12-01": "2026-12-02",
			"80c90278-b1cd-4c11-bfe0-24039d04592f": "5f0e2a11-9c3d-4e8f-a1b2-c3d4e5f60718"}},
		{name: "a string input is one user message", rec: `{"model":"m","input":"hi"}`,
			live: `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`, bind: Bindings{}},
		{name: "reasoning's encrypted content is not matched", rec: `{"model":"m","input":[{"type":"reasoning","summary":[],"encrypted_content":"gAAAA1"}]}`,
			live: `{"model":"m","input":[{"type":"reasoning","summary":[],"encrypted_content":"gAAAA2"}]}`, bind: Bindings{}},
		{name: "a chunk id of digits one run, of letters and digits the next", rec: `{"model":"m","input":[{"type":"function_call_output","call_id":"call_wpAAAAAAAAAA","output":"Chunk ID: 190737\nOutput:\nok"}]}`,
			live: `{"model":"m","input":[{"type":"function_call_output","call_id":"call_wpAAAAAAAAAA","output":"Chunk ID: 7deced\nOutput:\nok"}]}`, bind: Bindings{"190737": "7deced"}},
		{name: "the skills listed in another order", rec: `{"model":"m","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"<skills_instructions>\n### Available skills\n- openai-docs: docs\n- imagegen: images"},{"type":"input_text","text":"<permissions instructions>"}]}]}`,
			live: `{"model":"m","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"<skills_instructions>\n### Available skills\n- imagegen: images\n- skill-creator: skills"},{"type":"input_text","text":"<permissions instructions>"}]}]}`, bind: Bindings{}},
		{name: "no skills listed yet", rec: `{"model":"m","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}]}`,
			live: `{"model":"m","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"<skills_instructions>\n- imagegen: images"},{"type":"input_text","text":"<permissions instructions>"}]}]}`, bind: Bindings{}},
		{name: "other permissions beside the skills", rec: `{"model":"m","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"<skills_instructions>"},{"type":"input_text","text":"<permissions instructions> never"}]}]}`,
			live: `{"model":"m","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"<skills_instructions>"},{"type":"input_text","text":"<permissions instructions> always"}]}]}`, path: "input[0].content[0].text"},
		{name: "another instruction", rec: rec, live: strings.Replace(live, "be brief", "be long", 1), path: "instructions"},
		{name: "a namespace's function more", rec: rec, live: strings.Replace(live, `{"type":"function","name":"delegate_task"}`, `{"type":"function","name":"delegate_task"},{"type":"function","name":"task_status"}`, 1), path: "tools[2]"},
		{name: "another exit", rec: strings.Replace(rec, "session ID 20868", "exited with code 0", 1), live: strings.Replace(live, "session ID 7", "exited with code 1", 1), path: "input[2].output"},
		{name: "one session polled as another", rec: rec, live: strings.Replace(live, `\"session_id\":7`, `\"session_id\":8`, 1), path: "input[3].arguments"},
		{name: "an output answering another call", rec: rec, live: strings.Replace(live, `"call_id":"call_wpCCCCCCCCCC","output"`, `"call_id":"call_wpDDDDDDDDDD","output"`, 1), path: "input[4].call_id"},
		{name: "an item more", rec: `{"model":"m","input":"hi"}`, live: `{"model":"m","input":[{"type":"message","role":"user","content":"hi"},{"type":"message","role":"assistant","content":"yo"}]}`, path: "input[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bind := checkMatch(t, responsesShape(t, tc.rec), responsesShape(t, tc.live), tc.bind, tc.path)
			if _, ok := tc.bind["session ID 20868"]; ok && bind.SessionID("20868") != "7" {
				t.Errorf("SessionID(20868) = %q", bind.SessionID("20868"))
			}
		})
	}
}

// TestParseResponsesShape: what a Responses request's shape keeps.
func TestParseResponsesShape(t *testing.T) {
	s, err := ParseShape(ResponsesPath, []byte(`{"model":"m","stream":true,"instructions":"x","tools":[{"type":"function","name":"a"},{"type":"namespace","name":"ns","tools":[{"type":"function","name":"b"}]},{"type":"web_search"}],"input":"hi","prompt_cache_key":"k"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Shape{Path: ResponsesPath, Stream: true, Model: "m", list: "input", value: map[string]any{
		"instructions": "x", "tools": []any{"a", "ns.b", "web_search"},
		"input": []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "hi"}}}}}}
	if diff := cmp.Diff(want, s, cmp.AllowUnexported(Shape{})); diff != "" {
		t.Errorf("shape (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"model":"m"}`, `{"model":"m","input":3}`, `[1]`, `{"input":"a"} {}`} {
		if _, err := ParseShape(ResponsesPath, []byte(bad)); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
}

// FuzzParseResponsesShape: any body parses or fails cleanly, a parsed
// request matches itself with every binding the identity, and a diff
// against another has a path.
func FuzzParseResponsesShape(f *testing.F) {
	f.Add([]byte(`{"model":"m","input":[{"type":"function_call_output","call_id":"call_wpAAAAAAAAAA","output":"Wall time: 0.1 seconds\nProcess running with session ID 3"}],"tools":[{"type":"namespace","name":"n","tools":[{"name":"f"}]}]}`), []byte(`{"model":"m","input":"hi"}`))
	f.Add([]byte(`{"input":[{"type":"function_call","arguments":"{\"session_id\":12}"}]}`), []byte(`{"input":{}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) { fuzzMatch(t, ResponsesPath, a, b) })
}

// TestDiffShowsWhereStringsDiffer: a long string that differs far in is
// shown from a little before its first difference.
func TestDiffShowsWhereStringsDiffer(t *testing.T) {
	long := strings.Repeat("a skill is a set of local instructions. ", 8)
	_, d := Match(responsesShape(t, `{"model":"m","input":"`+long+`root /tmp/cc-a/x"}`), responsesShape(t, `{"model":"m","input":"`+long+`root /tmp/cc-b/x"}`))
	if d == nil {
		t.Fatal("matched")
	}
	want := &Diff{Path: "input[0].content[0].text", Recorded: `..."set of local instructions. root /tmp/cc-a/x"`,
		Live: `..."set of local instructions. root /tmp/cc-b/x"`, Count: 1}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
}
