package view

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIndexModelCalls: a Claude CLI's model calls are calls of the index,
// a failed one saying why.
func TestIndexModelCalls(t *testing.T) {
	_, ix, err := read(context.Background(), "../fixtures/golden/idle-model-cut-stream.zst")
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
	_, ix, err := read(context.Background(), path)
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
	_, ix, err := read(context.Background(), path)
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
