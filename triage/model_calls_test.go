package triage

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestModelCallsInTimeline: a Claude CLI's model calls (Anthropic's
// Messages API) are calls of the timeline, from the same decode as the
// conformance checks: a cut stream ends its call as a failure saying why,
// the next call carries the answer assembled from its stream.
func TestModelCallsInTimeline(t *testing.T) {
	tl, err := Load(context.Background(), "../fixtures/golden/idle-model-cut-stream.zst", nil)
	if err != nil {
		t.Fatal(err)
	}
	type call struct{ Conn, Method, Outcome, Reason string }
	var got []call
	var answer string
	for _, c := range tl.Calls {
		if c.Method == "messages" {
			got = append(got, call{c.Conn, c.Method, string(c.Outcome), c.Reason})
			answer = string(c.Exit.Data)
		}
	}
	want := []call{{"h4", "messages", "failure", "unexpected EOF"}, {"h5", "messages", "success", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model calls (-want +got):\n%s", diff)
	}
	if want := `{"id":"msg_synth0002","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{"type":"text","text":"` + "RESULT_5b1e0c1e-3f57-4e0e-9d39-3b0f3c1f6a10" + `"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":4}}`; answer != want {
		t.Errorf("the second call's answer is %s, want %s", answer, want)
	}
}
