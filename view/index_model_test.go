package view

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/delivery"
)

// TestIndexModelCalls: a Claude CLI's model calls are calls of the index,
// a failed one saying why.
func TestIndexModelCalls(t *testing.T) {
	_, ix, err := read(context.Background(), "../fixtures/golden/idle-model-cut-stream.zst", delivery.Registered())
	if err != nil {
		t.Fatal(err)
	}
	type call struct{ Conn, Method, Outcome, Reason string }
	var got []call
	for _, c := range ix.Calls {
		if c.Method == "messages" {
			got = append(got, call{c.Conn, c.Method, c.Outcome, c.Reason})
		}
	}
	want := []call{{"h4", "messages", "failure", "the stream ended before message_stop (unexpected EOF)"}, {"h5", "messages", "success", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model calls (-want +got):\n%s", diff)
	}
}

// TestReadModelCall: a model call's details are its request body and the
// answer assembled from its stream.
func TestReadModelCall(t *testing.T) {
	const path = "../fixtures/golden/idle-model-cut-stream.zst"
	_, ix, err := read(context.Background(), path, delivery.Registered())
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range ix.Calls {
		if c.Protocol != "anthropic" || c.Outcome != "success" {
			continue
		}
		found = true
		d, err := readCall(context.Background(), path, c)
		if err != nil {
			t.Fatal(err)
		}
		if d.Payload == nil || !strings.Contains(string(d.Payload.JSON), `"tool_result"`) {
			t.Errorf("payload %+v, want the request carrying the tool_result", d.Payload)
		}
		if d.Exit == nil || !strings.Contains(string(d.Exit.JSON), `"msg_synth0002"`) {
			t.Errorf("exit %+v, want the answer msg_synth0002", d.Exit)
		}
	}
	if !found {
		t.Fatal("no successful model call in the index")
	}
}

// TestIndexCodexModelCalls: a Codex CLI's Responses calls (a real Codex
// 0.169.0 session recorded through wireproof record in front of wireproof
// model) are model calls of the index, their details the request and the
// assembled response.
func TestIndexCodexModelCalls(t *testing.T) {
	const path = "../model/testdata/bundles/codex-idle-responses.zst"
	_, ix, err := read(context.Background(), path, delivery.Registered())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range ix.Calls {
		if c.Protocol != "openai" {
			continue
		}
		got = append(got, c.Method+" "+c.Outcome+" "+c.Reason)
		d, err := readCall(context.Background(), path, c)
		if err != nil {
			t.Fatal(err)
		}
		if d.Payload == nil || !strings.Contains(string(d.Payload.JSON), `"input"`) {
			t.Errorf("payload %+v, want the Responses request", d.Payload)
		}
		if d.Exit == nil || !strings.Contains(string(d.Exit.JSON), `"resp_wp`) {
			t.Errorf("exit %+v, want the assembled response", d.Exit)
		}
	}
	want := []string{"responses success ", "responses success ", "responses success ", "responses success "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Codex model calls (-want +got):\n%s", diff)
	}
}

// TestReadMessageCall: the calls of the providers' side are in the index
// with their messages as details: an MCP tools/call (JSON-RPC over HTTP)
// with its request and answer, a stream-json turn with the user line that
// opened it and the result that ended it.
func TestReadMessageCall(t *testing.T) {
	path := filepath.Join(goldenLive, "idle.zst")
	_, ix, err := read(context.Background(), path, delivery.Registered())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range ix.Calls {
		var wantReq, wantExit string
		switch {
		case c.Protocol == "jsonrpc" && c.Method == "tools/call":
			wantReq, wantExit = `"delegate_task"`, `"result"`
		case c.Protocol == "stream-json" && c.Method == "turn" && c.EndSeq != 0:
			wantReq, wantExit = `"type":"user"`, `"type":"result"`
		default:
			continue
		}
		if seen[c.Protocol] {
			continue
		}
		d, err := readCall(context.Background(), path, c)
		if err != nil {
			t.Fatal(err)
		}
		if d.Payload == nil || d.Exit == nil {
			t.Fatalf("%s %s @%d: payload %v, exit %v; want both messages", c.Protocol, c.Method, c.Seq, d.Payload, d.Exit)
		}
		if c.Method == "tools/call" && !strings.Contains(string(d.Payload.JSON), "task") {
			continue // a task_status call: the test wants the delegation
		}
		if !strings.Contains(string(d.Payload.JSON), wantReq) || !strings.Contains(string(d.Exit.JSON), wantExit) {
			t.Errorf("%s %s @%d: payload %s / exit %s; want %s and %s", c.Protocol, c.Method, c.Seq, string(d.Payload.JSON), string(d.Exit.JSON), wantReq, wantExit)
		}
		seen[c.Protocol] = true
	}
	if !seen["jsonrpc"] || !seen["stream-json"] {
		t.Errorf("calls with details: %v; want an MCP tools/call and a stream-json turn", seen)
	}
}

// codexVerifyBundle is a real run of verify --provider codex --provider-cli
// (Codex 0.169.0's app-server under the fixture server, idle).
const codexVerifyBundle = "../protocol/testdata/codex-verify-idle.zst"

// TestReadCodexCall: a Codex app-server's turns and items are calls of the
// index (protocol codex), each with the notification that started it as
// its payload and the one that completed it as its exit; its JSON-RPC
// calls (turn/start) have their request and answer.
func TestReadCodexCall(t *testing.T) {
	_, ix, err := read(context.Background(), codexVerifyBundle, delivery.Registered())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"turn":                  {`"method":"turn/started"`, `"method":"turn/completed"`},
		"item userMessage":      {`"method":"item/started"`, `"method":"item/completed"`},
		"item mcpToolCall":      {`"method":"item/started"`, `"method":"item/completed"`},
		"item commandExecution": {`"method":"item/started"`, `"method":"item/completed"`},
		"item agentMessage":     {`"method":"item/started"`, `"method":"item/completed"`},
		"jsonrpc turn/start":    {`"method":"turn/start"`, `"result"`},
		"jsonrpc thread/start":  {`"method":"thread/start"`, `"result"`},
		"jsonrpc initialize":    {`"method":"initialize"`, `"result"`},
	}
	seen := map[string]bool{}
	for _, c := range ix.Calls {
		key := c.Method
		switch c.Protocol {
		case "codex":
		case "jsonrpc":
			key = "jsonrpc " + c.Method
		default:
			continue
		}
		w, ok := want[key]
		if !ok || seen[key] {
			continue
		}
		seen[key] = true
		if c.Outcome != "success" {
			t.Errorf("%s %s @%d: %s %s", c.Protocol, c.Method, c.Seq, c.Outcome, c.Reason)
		}
		d, err := readCall(context.Background(), codexVerifyBundle, c)
		if err != nil {
			t.Fatal(err)
		}
		if d.Payload == nil || d.Exit == nil || !strings.Contains(string(d.Payload.JSON), w[0]) || !strings.Contains(string(d.Exit.JSON), w[1]) {
			t.Errorf("%s @%d..@%d: payload %v / exit %v; want %s and %s", key, c.Seq, c.EndSeq, d.Payload, d.Exit, w[0], w[1])
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("no %s call in the index", k)
		}
	}
}

// TestReadCutLineCall: a Codex item whose item/completed the recorder cut
// at its line cap (a real one of 1.05 MB: protocol/testdata/codex-long-line.zst)
// shows that notification from its start, joined from its pieces.
func TestReadCutLineCall(t *testing.T) {
	const path = "../protocol/testdata/codex-long-line.zst"
	_, ix, err := read(context.Background(), path, delivery.Registered())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ix.Calls, func(c CallSpan) bool { return c.Method == "item commandExecution" })
	if i < 0 {
		t.Fatal("no commandExecution item in the index")
	}
	d, err := readCall(context.Background(), path, ix.Calls[i])
	if err != nil {
		t.Fatal(err)
	}
	if d.Exit == nil || d.Exit.Size <= 1<<20 || !strings.HasPrefix(d.Exit.Text, `{"method":"item/completed"`) {
		size, start := 0, ""
		if d.Exit != nil {
			size, start = d.Exit.Size, d.Exit.Text[:min(len(d.Exit.Text), 80)]
		}
		t.Errorf("exit of %d bytes starting %q, want the whole item/completed (over 1 MiB) from its start", size, start)
	}
	if d.Payload == nil || !strings.Contains(string(d.Payload.JSON), `"method":"item/started"`) {
		t.Errorf("payload %+v, want item/started", d.Payload)
	}
}
