package view

import (
	"context"
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
