package replay_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model/openai"
	"github.com/wireproof/wireproof/replay"
)

// TestCutBundleLeavesUnansweredCallsUndecided: a Responses answer's
// function call that no later request answers fails model-tool-result at
// the end of a whole recording, but not at the end of one cut short (a
// killed recorder): the answer may have come after the cut. The two
// streams are the same events; only the trailer's absence differs.
func TestCutBundleLeavesUnansweredCallsUndecided(t *testing.T) {
	req := []byte(`{"model":"m","stream":true,"input":"go","tools":[{"type":"function","name":"exec_command"}]}`)
	var res bytes.Buffer
	sw := openai.NewStreamWriter(&res)
	for _, ev := range openai.Events(&openai.Response{ID: "resp_1", Object: "response", Status: openai.StatusCompleted,
		Output: []openai.Item{{Type: openai.ItemFunctionCall, ID: "fc_1", CallID: "call_1", Name: "exec_command", Arguments: `{"cmd":"true"}`, Status: "completed"}}}, nil) {
		if err := sw.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	events := []bundle.Event{
		{Kind: bundle.KindHTTPRequest, Conn: "model-h1", Method: http.MethodPost, URL: "/v1/responses",
			Header: map[string][]string{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(req))}}},
		{Kind: bundle.KindHTTPBody, Conn: "model-h1", Dir: bundle.DirClientToServer, Body: bundle.Text(req)},
		{Kind: bundle.KindHTTPResponse, Conn: "model-h1", Status: 200, Header: map[string][]string{"Content-Type": {"text/event-stream"}}},
		{Kind: bundle.KindHTTPBody, Conn: "model-h1", Dir: bundle.DirServerToClient, Body: bundle.Text(res.Bytes())},
		{Kind: bundle.KindHTTPEnd, Conn: "model-h1", Size: int64(res.Len())},
	}
	for _, tc := range []struct {
		name string
		cut  bool
		want string // the conformance suite's failing check, "" for none
	}{
		{"whole", false, assert.CheckModelToolResult},
		{"cut short", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := replay.NewSession(bundle.Header{Tool: "test", Started: time.Unix(0, 0)}, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, ev := range events {
				ev.Seq, ev.T = uint64(i+1), int64(i+1)
				if err := s.Feed(&ev, 10); err != nil {
					t.Fatal(err)
				}
			}
			got := ""
			if f := s.Result(tc.cut, "").Verdict.Failure; f != nil {
				got = f.Check
			}
			if got != tc.want {
				t.Errorf("the verdict fails %q, want %q", got, tc.want)
			}
		})
	}
}
