package cassette

import (
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
			bind, d := Match(shape(t, tc.rec), shape(t, tc.live))
			if tc.path != "" {
				if d == nil || d.Path != tc.path {
					t.Fatalf("diff %v, want one at %s", d, tc.path)
				}
				return
			}
			if d != nil {
				t.Fatalf("no match: %s", d)
			}
			changed := Bindings{}
			for k, v := range bind {
				if k != v {
					changed[k] = v
				}
			}
			if diff := cmp.Diff(tc.bind, changed); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
		})
	}
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
	f.Fuzz(func(t *testing.T, a, b []byte) {
		sa, err := ParseShape("/v1/messages", a)
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
		sb, err := ParseShape("/v1/messages", b)
		if err != nil {
			return
		}
		if _, d := Match(sa, sb); d != nil && d.Path == "" {
			t.Fatalf("a diff without a path: %+v", d)
		}
	})
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
