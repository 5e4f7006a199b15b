package protocol_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model/openai"
	"github.com/wireproof/wireproof/protocol"
)

// responsesSSE writes resp as the stream the scripted model sends.
func responsesSSE(t testing.TB, resp *openai.Response) []byte {
	t.Helper()
	var buf bytes.Buffer
	sw := openai.NewStreamWriter(&buf)
	for _, ev := range openai.Events(resp, nil) {
		if err := sw.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// responsesSummary is what a test compares of a Responses call's events.
type responsesSummary struct {
	Kind     string
	Outcome  protocol.Outcome
	Facts    protocol.ModelCall
	Calls    []string // the answer's function calls
	Text     string
	Protocol protocol.Name
}

func decodeResponses(t *testing.T, xs ...modelExchange) []responsesSummary {
	t.Helper()
	var out []responsesSummary
	r := protocol.NewRouter([]protocol.Route{protocol.HTTPRoute(protocol.NewHTTPDecoder(nil))}, func(ev *protocol.Event) {
		if ev.Protocol != protocol.OpenAI {
			return
		}
		if ev.Method != protocol.MethodResponses || ev.Call == nil {
			t.Errorf("event %s method %q", ev.Kind, ev.Method)
		}
		s := responsesSummary{Kind: ev.Kind.String(), Outcome: ev.Call.Outcome, Facts: *ev.Model, Protocol: ev.Protocol}
		if resp := ev.Model.Response; resp != nil {
			for _, it := range resp.Output {
				switch it.Type {
				case openai.ItemFunctionCall:
					s.Calls = append(s.Calls, it.Namespace+"/"+it.Name+" "+it.CallID)
				case openai.ItemMessage:
					s.Text += it.Content.Text()
				}
			}
			if ev.Kind == protocol.KindResponse && !bytes.Contains(ev.Body, []byte(resp.ID)) {
				t.Errorf("the response body %.100s does not hold the response", ev.Body)
			}
		}
		s.Facts.Response = nil
		out = append(out, s)
	})
	seq := uint64(0)
	for i, x := range xs {
		for _, ev := range x.events(fmt.Sprintf("o%d", i+1)) {
			seq++
			ev.Seq, ev.T = seq, int64(seq)
			r.Feed(&ev)
		}
	}
	return out
}

// TestResponsesDecoder decodes real Codex 0.169.0 requests (model/testdata/
// responses) and streamed answers: the call's facts, the function_call
// answered by a later request's function_call_output, and each way an
// answer or a request breaks the protocol.
func TestResponsesDecoder(t *testing.T) {
	delegateReq := modelTestdata(t, "responses", "codex-idle-1-delegate.json")
	releaseReq := modelTestdata(t, "responses", "codex-idle-2-release.json")
	var release openai.Request
	if err := json.Unmarshal(releaseReq, &release); err != nil {
		t.Fatal(err)
	}
	var call openai.Item
	for _, it := range release.Input {
		if it.Type == openai.ItemFunctionCall {
			call = it
		}
	}
	if call.CallID == "" {
		t.Fatal("the release request holds no function_call")
	}
	call.Status = openai.StatusCompleted
	answer := func(id string, items ...openai.Item) *openai.Response {
		return &openai.Response{ID: id, Object: "response", Status: openai.StatusCompleted, Model: "gpt-5-codex", Output: items}
	}
	msg := openai.Item{Type: openai.ItemMessage, ID: "msg_2", Role: openai.RoleAssistant, Status: openai.StatusCompleted, Content: openai.Content{{Type: openai.PartOutputText, Text: "PARENT_RELEASED"}}}
	delegateRes := responsesSSE(t, answer("resp_1", call))
	releaseRes := responsesSSE(t, answer("resp_2", msg))
	stream := func(req, res []byte) modelExchange {
		return modelExchange{path: "/v1/responses", ctype: "text/event-stream", req: req, res: res, status: 200}
	}
	callName := call.Namespace + "/" + call.Name + " " + call.CallID
	base := protocol.ModelCall{Path: "/v1/responses", Stream: true, Model: "gpt-5-codex", Messages: len(release.Input) - 2, Tools: len(release.Functions())}

	t.Run("a delegation answered", func(t *testing.T) {
		got := decodeResponses(t, stream(delegateReq, delegateRes), stream(releaseReq, releaseRes))
		if len(got) != 4 || len(got[2].Facts.Answers) != 1 {
			t.Fatalf("events %+v", got)
		}
		req1, res1, req2, res2 := base, base, base, base
		res1.Status, res1.Complete = 200, true
		req2.Messages = len(release.Input)
		req2.Answers = []protocol.ToolAnswer{{ToolUseID: call.CallID, Name: call.Name, Protocol: protocol.OpenAI, UseConn: "o1", UseSeq: got[2].Facts.Answers[0].UseSeq}}
		res2.Messages, res2.Answers, res2.Status, res2.Complete = req2.Messages, req2.Answers, 200, true
		want := []responsesSummary{
			{Kind: "request", Outcome: protocol.OutcomeOpen, Facts: req1, Protocol: protocol.OpenAI},
			{Kind: "response", Outcome: protocol.OutcomeSuccess, Facts: res1, Calls: []string{callName}, Protocol: protocol.OpenAI},
			{Kind: "request", Outcome: protocol.OutcomeOpen, Facts: req2, Protocol: protocol.OpenAI},
			{Kind: "response", Outcome: protocol.OutcomeSuccess, Facts: res2, Text: "PARENT_RELEASED", Protocol: protocol.OpenAI},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})

	badReq := []byte(`{"model":"m","stream":true,"input":[{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{}"},{"type":"function_call_output","call_id":"c9","output":"x"}],"tools":[{"type":"function","name":"exec_command"}]}`)
	unknown := call
	unknown.Namespace, unknown.Name, unknown.CallID, unknown.ID = "", "wireproof_no_such_tool", "call_x", "fc_x"
	raw := string(delegateRes)
	k := strings.Index(raw, "event: response.function_call_arguments.delta")
	malformed := raw[:k] + "event: response.function_call_arguments.delta\ndata: {\"type\":\n\n" + raw[k:]
	for _, tc := range []struct {
		name  string
		xs    []modelExchange
		check func(t *testing.T, last responsesSummary, all []responsesSummary)
	}{
		{"a call without its output, an output without its call", []modelExchange{stream(badReq, releaseRes)}, func(t *testing.T, _ responsesSummary, all []responsesSummary) {
			want := []string{"function_call_output of item 1 answers c9, which no function_call before it made", "function_call c1 (exec_command) of item 0 has 0 function_call_outputs"}
			if d := cmp.Diff(want, all[0].Facts.Unanswered); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		}},
		{"a tool not offered", []modelExchange{stream(delegateReq, responsesSSE(t, answer("resp_u", unknown)))}, func(t *testing.T, last responsesSummary, _ []responsesSummary) {
			if want := []string{`function_call call_x calls "wireproof_no_such_tool"`}; !cmp.Equal(want, last.Facts.Unoffered) {
				t.Errorf("unoffered %q", last.Facts.Unoffered)
			}
		}},
		{"an id answered twice", []modelExchange{stream(delegateReq, delegateRes), stream(delegateReq, delegateRes)}, func(t *testing.T, last responsesSummary, _ []responsesSummary) {
			if len(last.Facts.Reused) != 3 || !strings.HasPrefix(last.Facts.Reused[0], "response id resp_1") {
				t.Errorf("reused %q", last.Facts.Reused)
			}
		}},
		{"a malformed event", []modelExchange{stream(delegateReq, []byte(malformed))}, func(t *testing.T, last responsesSummary, _ []responsesSummary) {
			if len(last.Facts.Problems) != 1 || last.Facts.Problems[0].Kind != openai.ProblemMalformed || last.Outcome != protocol.OutcomeFailure {
				t.Errorf("problems %v outcome %v", last.Facts.Problems, last.Outcome)
			}
		}},
		{"a cut stream", []modelExchange{stream(delegateReq, delegateRes[:k])}, func(t *testing.T, last responsesSummary, _ []responsesSummary) {
			if last.Facts.Complete || last.Outcome != protocol.OutcomeFailure {
				t.Errorf("complete %v outcome %v", last.Facts.Complete, last.Outcome)
			}
		}},
		{"a cut stream and a broken connection", []modelExchange{{path: "/v1/responses", ctype: "text/event-stream", status: 200, req: delegateReq, res: delegateRes[:k], endErr: "write: broken pipe"}},
			func(t *testing.T, last responsesSummary, _ []responsesSummary) {
				if last.Facts.Complete || last.Outcome != protocol.OutcomeFailure {
					t.Errorf("complete %v outcome %v", last.Facts.Complete, last.Outcome)
				}
			}},
		// The Codex CLI may drop the connection once it has
		// response.completed, before the proxy saw the upstream's end: the
		// answer came whole, so the call succeeded.
		{"a whole stream, then the client gone", []modelExchange{{path: "/v1/responses", ctype: "text/event-stream", status: 200, req: delegateReq, res: delegateRes, endErr: "write: broken pipe"}},
			func(t *testing.T, last responsesSummary, _ []responsesSummary) {
				if !last.Facts.Complete || last.Outcome != protocol.OutcomeSuccess {
					t.Errorf("complete %v outcome %v", last.Facts.Complete, last.Outcome)
				}
			}},
		{"an error answer", []modelExchange{{path: "/v1/responses", ctype: "application/json", req: delegateReq, status: http.StatusServiceUnavailable,
			res: []byte(`{"error":{"message":"The server is overloaded.","type":"server_error","param":null,"code":null}}`)}}, func(t *testing.T, last responsesSummary, _ []responsesSummary) {
			if e := last.Facts.APIError; e == nil || e.Type != "server_error" || last.Outcome != protocol.OutcomeFailure {
				t.Errorf("api error %+v outcome %v", e, last.Outcome)
			}
		}},
		{"a request that is not one", []modelExchange{stream([]byte(`{"model":`), releaseRes)}, func(t *testing.T, _ responsesSummary, all []responsesSummary) {
			if !strings.HasPrefix(all[0].Facts.RequestErr, "the request body is not a Responses request") {
				t.Errorf("request error %q", all[0].Facts.RequestErr)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decodeResponses(t, tc.xs...)
			if len(got) != 2*len(tc.xs) {
				t.Fatalf("%d events: %+v", len(got), got)
			}
			tc.check(t, got[len(got)-1], got)
		})
	}
}

// FuzzResponsesDecoder: any answer body of a Responses call decodes
// without panicking, into one Request and one Response event.
func FuzzResponsesDecoder(f *testing.F) {
	req := modelTestdata(f, "responses", "codex-idle-2-release.json")
	f.Add(responsesSSE(f, &openai.Response{ID: "r", Object: "response", Status: "completed"}))
	f.Add([]byte("event: response.created\ndata: {}\n\n"))
	f.Fuzz(func(t *testing.T, res []byte) {
		n := 0
		r := protocol.NewRouter([]protocol.Route{protocol.HTTPRoute(protocol.NewHTTPDecoder(nil))}, func(ev *protocol.Event) {
			if ev.Protocol == protocol.OpenAI {
				n++
			}
		})
		for i, ev := range (modelExchange{path: "/v1/responses", ctype: "text/event-stream", req: req, res: res, status: 200}).events("o1") {
			ev.Seq = uint64(i + 1)
			r.Feed(&ev)
		}
		if n != 2 {
			t.Fatalf("%d events", n)
		}
	})
}

// TestResponsesRealRecording decodes a real Codex 0.169.0 session recorded
// through wireproof record in front of wireproof model (idle's launch turn
// and its wake): four Responses calls, each whole and answered, the
// delegate_task and task_status calls each answered by the next request's
// function_call_output.
func TestResponsesRealRecording(t *testing.T) {
	r, err := bundle.Open(filepath.Join("..", "model", "testdata", "bundles", "codex-idle-responses.zst"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	router := protocol.NewRouter([]protocol.Route{protocol.HTTPRoute(protocol.NewHTTPDecoder(nil))}, func(ev *protocol.Event) {
		if ev.Protocol != protocol.OpenAI || ev.Kind != protocol.KindResponse {
			return
		}
		m := ev.Model
		s := fmt.Sprintf("%s complete=%v problems=%d unanswered=%d unoffered=%d reused=%d", ev.Call.Outcome, m.Complete, len(m.Problems), len(m.Unanswered), len(m.Unoffered), len(m.Reused))
		for _, a := range m.Answers {
			s += " answers " + a.Name
		}
		for _, it := range m.Response.Output {
			s += " -> " + it.Type + " " + it.Name + it.Content.Text()
		}
		got = append(got, s)
	})
	for {
		var ev bundle.Event
		if err := r.Next(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		router.Feed(&ev)
	}
	ok := "success complete=true problems=0 unanswered=0 unoffered=0 reused=0"
	want := []string{
		ok + " -> function_call delegate_task",
		ok + " answers delegate_task -> message PARENT_RELEASED",
		ok + " -> function_call task_status",
		ok + " answers task_status -> message ACK:SECRET-123",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
