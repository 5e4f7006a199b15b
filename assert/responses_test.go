package assert_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model/openai"
	"github.com/wireproof/wireproof/protocol"
)

// responsesExchange is one recorded Responses API call.
type responsesExchange struct {
	req, res []byte
	status   int
	ctype    string
	endErr   string // the http.end's err
}

// conformanceFailures decodes the exchanges (one connection each), stops
// the decoding where the bundle ends, and returns the conformance suite's
// failures on the Responses events, as "check: seen".
func conformanceFailures(t *testing.T, xs ...responsesExchange) []string {
	t.Helper()
	return stoppedFailures(t, bundle.Event{}, xs...)
}

// stoppedFailures is conformanceFailures stopped at an event of kind
// at.Kind (a proc.exit: the server stopped; none: the bundle ended).
func stoppedFailures(t *testing.T, at bundle.Event, xs ...responsesExchange) []string {
	t.Helper()
	var got []string
	r := protocol.NewRouter([]protocol.Route{protocol.HTTPRoute(protocol.NewHTTPDecoder(nil))}, func(ev *protocol.Event) {
		if ev.Protocol != protocol.OpenAI {
			return
		}
		if f := assert.Conformance.Run(ev); f != nil {
			got = append(got, f.Check+": "+f.Seen)
		}
	})
	seq := uint64(0)
	feed := func(ev bundle.Event) {
		seq++
		ev.Seq, ev.T = seq, int64(seq)
		r.Feed(&ev)
	}
	for i, x := range xs {
		conn := fmt.Sprintf("o%d", i+1)
		feed(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: conn, Method: http.MethodPost, URL: "/v1/responses",
			Header: map[string][]string{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(x.req))}}})
		feed(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirClientToServer, Body: bundle.Text(x.req)})
		ctype := x.ctype
		if ctype == "" {
			ctype = "text/event-stream"
		}
		status := x.status
		if status == 0 {
			status = 200
		}
		feed(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: status, Header: map[string][]string{"Content-Type": {ctype}}})
		feed(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text(x.res)})
		feed(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: conn, Size: int64(len(x.res)), Err: x.endErr})
	}
	at.Seq, at.T = seq+1, int64(seq+1)
	r.Stop(&at, "stopped")
	return got
}

func sse(resp *openai.Response) []byte {
	var buf bytes.Buffer
	sw := openai.NewStreamWriter(&buf)
	for _, ev := range openai.Events(resp, nil) {
		_ = sw.Write(ev)
	}
	return buf.Bytes()
}

// TestResponsesConformance: the model checks judge the Codex CLI's
// Responses calls; each way a call breaks the protocol fails its check.
func TestResponsesConformance(t *testing.T) {
	tools := `"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"mcp__t3_code","tools":[{"type":"function","name":"delegate_task"}]}]`
	first := []byte(`{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}],` + tools + `}`)
	second := []byte(`{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":"go"},{"type":"function_call","call_id":"call_1","namespace":"mcp__t3_code","name":"delegate_task","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"ok"}],` + tools + `}`)
	orphan := []byte(`{"model":"m","stream":true,"input":[{"type":"function_call_output","call_id":"call_9","output":"ok"}],` + tools + `}`)
	answer := func(id string, it openai.Item) *openai.Response {
		return &openai.Response{ID: id, Object: "response", Status: openai.StatusCompleted, Output: []openai.Item{it}}
	}
	delegate := answer("resp_1", openai.Item{Type: openai.ItemFunctionCall, ID: "fc_1", CallID: "call_1", Namespace: "mcp__t3_code", Name: "delegate_task", Arguments: "{}", Status: "completed"})
	done := answer("resp_2", openai.Item{Type: openai.ItemMessage, ID: "msg_2", Role: "assistant", Status: "completed", Content: openai.Content{{Type: "output_text", Text: "PARENT_RELEASED"}}})
	unknown := answer("resp_3", openai.Item{Type: openai.ItemFunctionCall, ID: "fc_3", CallID: "call_3", Name: "delegate_task", Arguments: "{}", Status: "completed"})
	raw := sse(delegate)
	k := bytes.Index(raw, []byte("event: response.function_call_arguments.delta"))
	malformed := append(append(append([]byte{}, raw[:k]...), "event: response.output_item.done\ndata: {\"type\":\n\n"...), raw[k:]...)
	// an item done before it was added: its added event dropped
	a := bytes.Index(raw, []byte("event: response.output_item.added"))
	b := bytes.Index(raw, []byte("event: response.function_call_arguments.delta"))
	outOfOrder := append(append([]byte{}, raw[:a]...), raw[b:]...)
	for _, tc := range []struct {
		name string
		xs   []responsesExchange
		want string // the check that fails ("" for none), and a word of what it saw
		seen string
	}{
		{"a delegation answered", []responsesExchange{{req: first, res: sse(delegate)}, {req: second, res: sse(done)}}, "", ""},
		{"malformed event", []responsesExchange{{req: first, res: malformed}}, assert.CheckModelSSEEvent, "data is not a JSON event"},
		{"out of order", []responsesExchange{{req: first, res: outOfOrder}}, assert.CheckModelSSEOrder, "which is not open"},
		{"cut", []responsesExchange{{req: first, res: raw[:k]}}, assert.CheckModelStreamComplete, "without response.completed"},
		{"cut, the upstream gone", []responsesExchange{{req: first, res: raw[:k], endErr: "upstream body: unexpected EOF"}}, assert.CheckModelStreamComplete, "without response.completed (upstream body: unexpected EOF)"},
		// The client hung up mid-answer (its turn interrupted, the CLI
		// killed): the unfinished answer is not the model's failure.
		{"cut, the client gone", []responsesExchange{{req: first, res: raw[:k], endErr: "client: gone before the body ended (context canceled)"}}, "", ""},
		{"error", []responsesExchange{{req: first, status: 503, ctype: "application/json", res: []byte(`{"error":{"message":"overloaded","type":"server_error","param":null,"code":null}}`)}}, assert.CheckModelAPIError, "server_error: overloaded"},
		{"output of no call", []responsesExchange{{req: orphan, res: sse(done)}}, assert.CheckModelToolResult, "answers call_9"},
		{"id reused", []responsesExchange{{req: first, res: sse(delegate)}, {req: second, res: sse(delegate)}}, assert.CheckModelIDUnique, "response id resp_1"},
		{"tool not offered", []responsesExchange{{req: first, res: sse(unknown)}}, assert.CheckModelToolOffered, `calls "delegate_task"`},
		{"a call never answered", []responsesExchange{{req: first, res: sse(delegate)}}, assert.CheckModelToolResult,
			"function_call call_1 (delegate_task) of the answer to model call o1 (seq 5) has no function_call_output in any later request before the bundle ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := conformanceFailures(t, tc.xs...)
			if tc.want == "" {
				if d := cmp.Diff([]string(nil), got); d != "" {
					t.Errorf("failures (-want +got):\n%s", d)
				}
				return
			}
			if len(got) == 0 || !strings.HasPrefix(got[0], tc.want+": ") || !strings.Contains(got[0], tc.seen) {
				t.Errorf("failures %q, want the first %s seeing %q", got, tc.want, tc.seen)
			}
		})
	}
}

// TestResponsesCallCutByServerStop: a function call still unanswered when
// the server stops is the stop's doing, not judged; the same at the
// bundle's end fails model-tool-result there.
func TestResponsesCallCutByServerStop(t *testing.T) {
	req := []byte(`{"model":"m","stream":true,"input":"go","tools":[{"type":"function","name":"exec_command"}]}`)
	res := sse(&openai.Response{ID: "resp_1", Object: "response", Status: openai.StatusCompleted,
		Output: []openai.Item{{Type: openai.ItemFunctionCall, ID: "fc_1", CallID: "call_1", Name: "exec_command", Arguments: `{"cmd":"true"}`, Status: "completed"}}})
	if got := stoppedFailures(t, bundle.Event{Kind: bundle.KindProcExit, Conn: "server"}, responsesExchange{req: req, res: res}); len(got) != 0 {
		t.Errorf("failures at the server's stop: %q", got)
	}
	got := conformanceFailures(t, responsesExchange{req: req, res: res})
	want := []string{assert.CheckModelToolResult + ": function_call call_1 (exec_command) of the answer to model call o1 (seq 5) has no function_call_output in any later request before the bundle ended"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("failures at the bundle's end (-want +got):\n%s", d)
	}
}
