package protocol_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/protocol"
)

// modelTestdata reads a real Claude CLI request or a streamed answer of the
// scripted model (model/testdata).
func modelTestdata(t testing.TB, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "model", "testdata"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// modelExchange is one recorded HTTP exchange of a model call: the request
// body in one event, the response body in chunks of cut bytes.
type modelExchange struct {
	path, ctype, endErr string
	req, res            []byte
	status, cut         int
	noResponse, noEnd   bool
}

func (x modelExchange) events(conn string) []bundle.Event {
	evs := []bundle.Event{
		{Kind: bundle.KindHTTPRequest, Conn: conn, Method: http.MethodPost, URL: x.path,
			Header: map[string][]string{"Content-Type": {"application/json"}, "Content-Length": {fmt.Sprint(len(x.req))}, "X-Api-Key": {"[REDACTED]"}}},
		{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirClientToServer, Body: bundle.Text(x.req)},
	}
	if !x.noResponse {
		evs = append(evs, bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: x.status, Header: map[string][]string{"Content-Type": {x.ctype}}})
		cut := x.cut
		if cut <= 0 {
			cut = 97
		}
		for b := x.res; len(b) > 0; {
			n := min(cut, len(b))
			evs = append(evs, bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text(b[:n])})
			b = b[n:]
		}
	}
	if x.noEnd {
		return evs
	}
	return append(evs, bundle.Event{Kind: bundle.KindHTTPEnd, Conn: conn, Size: int64(len(x.res)), Err: x.endErr})
}

// modelSummary is what a test compares of a model call's events.
type modelSummary struct {
	Kind, Method string
	Seq          uint64
	Outcome      protocol.Outcome
	Facts        protocol.ModelCall
	Tools        []string // the answer's tool_use names
	Text         string   // the answer's text
}

// decodeModel feeds the exchanges, one connection each, through a Router
// with the HTTP route and returns the model calls' events; stop ends the
// bundle with a Router.Stop.
func decodeModel(t *testing.T, stop bool, xs ...modelExchange) []modelSummary {
	t.Helper()
	var out []modelSummary
	r := protocol.NewRouter([]protocol.Route{protocol.HTTPRoute(protocol.NewHTTPDecoder(nil))}, func(ev *protocol.Event) {
		if ev.Protocol != protocol.Anthropic {
			return
		}
		s := modelSummary{Kind: ev.Kind.String(), Method: ev.Method, Seq: ev.Seq, Outcome: ev.Call.Outcome, Facts: *ev.Model}
		if m := ev.Model.Message; m != nil {
			for _, b := range m.ToolUses() {
				s.Tools = append(s.Tools, b.Name)
			}
			for _, b := range m.Content {
				s.Text += b.Text
			}
			if ev.Kind == protocol.KindResponse && !bytes.Contains(ev.Body, []byte(m.ID)) {
				t.Errorf("the response body %.100s does not hold the message", ev.Body)
			}
		}
		s.Facts.Message = nil
		out = append(out, s)
	})
	seq := uint64(0)
	var last bundle.Event
	for i, x := range xs {
		for _, ev := range x.events(fmt.Sprintf("h%d", i+1)) {
			seq++
			ev.Seq, ev.T = seq, int64(seq)
			r.Feed(&ev)
			last = ev
		}
		if stop && i == len(xs)-1 {
			last.Seq++
			r.Stop(&last, "the bundle ended")
		}
	}
	return out
}

func TestAnthropicDecoder(t *testing.T) {
	delegateReq := modelTestdata(t, "requests", "idle-2-delegate.json")
	delegateRes := modelTestdata(t, "sse", "idle-2-delegate.sse")
	releaseReq := modelTestdata(t, "requests", "idle-3-release.json")
	releaseRes := modelTestdata(t, "sse", "idle-3-release.sse")
	stream := func(req, res []byte) modelExchange {
		return modelExchange{path: "/v1/messages?beta=true", ctype: "text/event-stream; charset=utf-8", status: 200, req: req, res: res}
	}
	reqFacts := protocol.ModelCall{Path: "/v1/messages", Stream: true, Model: "claude-opus-5-5", Messages: 4, Tools: 14}
	answered := func(f protocol.ModelCall) protocol.ModelCall {
		f.Status, f.Complete = 200, true
		return f
	}
	delegated := answered(reqFacts)
	// A delta whose data is not JSON.
	malformed := bytes.Replace(delegateRes, []byte(`"partial_json":""}}`), []byte(`"partial_json":`), 1)
	// The stream cut after its third event.
	cutAt := 0
	for range 3 {
		cutAt += bytes.Index(delegateRes[cutAt:], []byte("\n\n")) + 2
	}
	// The answer calls a tool the request does not offer.
	unknown := bytes.ReplaceAll(delegateRes, []byte(`"name":"mcp__t3-code__delegate_task"`), []byte(`"name":"wireproof_no_such_tool"`))
	// The request's delegate_task result is dropped.
	var doc map[string]any
	if err := json.Unmarshal(releaseReq, &doc); err != nil {
		t.Fatal(err)
	}
	msgs := doc["messages"].([]any)
	msgs[len(msgs)-1] = map[string]any{"role": "user", "content": "no result"}
	broken, _ := json.Marshal(doc)
	overloaded := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	plain := `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"SECRET-42"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`

	req := func(seq uint64, f protocol.ModelCall) modelSummary {
		return modelSummary{Kind: "request", Method: "messages", Seq: seq, Outcome: protocol.OutcomeOpen, Facts: f}
	}
	res := func(seq uint64, o protocol.Outcome, f protocol.ModelCall, tools []string, text string) modelSummary {
		return modelSummary{Kind: "response", Method: "messages", Seq: seq, Outcome: o, Facts: f, Tools: tools, Text: text}
	}
	delegate := []string{"mcp__t3-code__delegate_task"}
	chunks := func(b []byte) uint64 { return uint64((len(b) + 96) / 97) }
	endSeq := 2 + 1 + chunks(delegateRes) + 1
	with := func(f protocol.ModelCall, change func(*protocol.ModelCall)) protocol.ModelCall {
		change(&f)
		return f
	}
	brokenFacts := with(reqFacts, func(f *protocol.ModelCall) {
		f.Messages = 6
		f.Unanswered = []string{"tool_use toolu_wp573a3fd8c5f55e6f87edf5 (mcp__t3-code__delegate_task) of message 4 has 0 tool_results in message 5"}
	})
	// The next request of the conversation, answering the delegate_task of
	// delegateRes (the real request answered the real run's tool_use id).
	answering := bytes.ReplaceAll(releaseReq, []byte("toolu_wp573a3fd8c5f55e6f87edf5"), []byte("toolu_wp00abc022247d1feab2ec33"))
	answeringFacts := with(reqFacts, func(f *protocol.ModelCall) {
		f.Messages = 6
		f.Answers = []protocol.ToolAnswer{{ToolUseID: "toolu_wp00abc022247d1feab2ec33", Name: "mcp__t3-code__delegate_task", Protocol: protocol.Anthropic, UseConn: "h1", UseSeq: endSeq}}
	})
	cases := []struct {
		name string
		stop bool
		xs   []modelExchange
		want []modelSummary
	}{
		{"a streamed tool call", false, []modelExchange{stream(delegateReq, delegateRes)}, []modelSummary{
			req(2, reqFacts), res(endSeq, protocol.OutcomeSuccess, delegated, delegate, ""),
		}},
		{"a tool_use answered in the next request", false, []modelExchange{stream(delegateReq, delegateRes), stream(answering, releaseRes)}, []modelSummary{
			req(2, reqFacts), res(endSeq, protocol.OutcomeSuccess, delegated, delegate, ""),
			req(endSeq+2, answeringFacts), res(endSeq+2+1+chunks(releaseRes)+1, protocol.OutcomeSuccess, answered(answeringFacts), nil, "PARENT_RELEASED"),
		}},
		{"the same answer twice", false, []modelExchange{stream(delegateReq, delegateRes), stream(delegateReq, delegateRes)}, []modelSummary{
			req(2, reqFacts), res(endSeq, protocol.OutcomeSuccess, delegated, delegate, ""),
			req(endSeq+2, reqFacts), res(2*endSeq, protocol.OutcomeSuccess, with(delegated, func(f *protocol.ModelCall) {
				f.Reused = []string{fmt.Sprintf("message id msg_wpaff761942bce5adc0f0fab (first answered at seq %d)", endSeq), fmt.Sprintf("tool_use id toolu_wp00abc022247d1feab2ec33 (first answered at seq %d)", endSeq)}
			}), delegate, ""),
		}},
		{"a malformed event", false, []modelExchange{stream(delegateReq, malformed)}, []modelSummary{
			req(2, reqFacts), res(2+1+chunks(malformed)+1, protocol.OutcomeFailure, with(delegated, func(f *protocol.ModelCall) {
				f.Problems = []*anthropic.StreamError{{Kind: anthropic.ProblemMalformed, Event: "content_block_delta", Msg: "data is not a JSON event: unexpected end of JSON input"}}
			}), delegate, ""),
		}},
		{"a cut stream", false, []modelExchange{{path: "/v1/messages", ctype: "text/event-stream", status: 200, req: delegateReq, res: delegateRes[:cutAt], endErr: "unexpected EOF"}}, []modelSummary{
			req(2, reqFacts), res(2+1+chunks(delegateRes[:cutAt])+1, protocol.OutcomeFailure, with(reqFacts, func(f *protocol.ModelCall) { f.Status = 200 }), delegate, ""),
		}},
		{"a whole stream, then the client gone", false, []modelExchange{{path: "/v1/messages?beta=true", ctype: "text/event-stream; charset=utf-8", status: 200, req: delegateReq, res: delegateRes, endErr: "client: gone before the body ended (context canceled)"}}, []modelSummary{
			req(2, reqFacts), res(endSeq, protocol.OutcomeSuccess, with(delegated, func(f *protocol.ModelCall) { f.ClientGone = true }), delegate, ""),
		}},
		{"529", false, []modelExchange{{path: "/v1/messages", ctype: "application/json", status: 529, req: delegateReq, res: []byte(overloaded)}}, []modelSummary{
			req(2, reqFacts), res(5, protocol.OutcomeFailure, with(reqFacts, func(f *protocol.ModelCall) {
				f.Status, f.APIError = 529, &anthropic.ErrorBody{Type: "overloaded_error", Message: "Overloaded"}
			}), nil, ""),
		}},
		{"a 502 without the API's shape", false, []modelExchange{{path: "/v1/messages", ctype: "text/html", status: 502, req: delegateReq, res: []byte("<html>bad gateway</html>")}}, []modelSummary{
			req(2, reqFacts), res(5, protocol.OutcomeFailure, with(reqFacts, func(f *protocol.ModelCall) {
				f.Status, f.APIError = 502, &anthropic.ErrorBody{Type: "Bad Gateway", Message: "<html>bad gateway</html>"}
			}), nil, ""),
		}},
		{"an unknown tool", false, []modelExchange{stream(delegateReq, unknown)}, []modelSummary{
			req(2, reqFacts), res(endSeq, protocol.OutcomeSuccess, with(delegated, func(f *protocol.ModelCall) {
				f.Unoffered = []string{`tool_use toolu_wp00abc022247d1feab2ec33 calls "wireproof_no_such_tool"`}
			}), []string{"wireproof_no_such_tool"}, ""),
		}},
		{"a tool_use without its result", false, []modelExchange{stream(broken, releaseRes)}, []modelSummary{
			req(2, brokenFacts), res(2+1+chunks(releaseRes)+1, protocol.OutcomeSuccess, answered(brokenFacts), nil, "PARENT_RELEASED"),
		}},
		{"not streamed", false, []modelExchange{{path: "/v1/messages", ctype: "application/json", status: 200, req: delegateReq, res: []byte(plain)}}, []modelSummary{
			req(2, reqFacts), res(2+1+chunks([]byte(plain))+1, protocol.OutcomeSuccess, delegated, nil, "SECRET-42"),
		}},
		{"count_tokens", false, []modelExchange{{path: "/v1/messages/count_tokens?beta=true", ctype: "application/json", status: 200, req: delegateReq, res: []byte(`{"input_tokens":12}`)}}, []modelSummary{
			{Kind: "request", Method: "count_tokens", Seq: 2, Outcome: protocol.OutcomeOpen, Facts: with(reqFacts, func(f *protocol.ModelCall) { f.Path, f.Stream = "/v1/messages/count_tokens", false })},
			{Kind: "response", Method: "count_tokens", Seq: 5, Outcome: protocol.OutcomeSuccess, Facts: with(reqFacts, func(f *protocol.ModelCall) { f.Path, f.Stream, f.Status = "/v1/messages/count_tokens", false, 200 })},
		}},
		{"a request that is not JSON", false, []modelExchange{{path: "/v1/messages", ctype: "application/json", status: 400, req: []byte("{"), res: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`)}}, []modelSummary{
			req(2, protocol.ModelCall{Path: "/v1/messages", RequestErr: "the request body is not a Messages request: unexpected end of JSON input"}),
			res(5, protocol.OutcomeFailure, protocol.ModelCall{Path: "/v1/messages", RequestErr: "the request body is not a Messages request: unexpected end of JSON input", Status: 400, APIError: &anthropic.ErrorBody{Type: "invalid_request_error", Message: "bad"}}, nil, ""),
		}},
		{"no response", false, []modelExchange{{path: "/v1/messages", req: delegateReq, noResponse: true, endErr: "dial tcp: connection refused"}}, []modelSummary{
			req(2, reqFacts), {Kind: "end", Method: "messages", Seq: 3, Outcome: protocol.OutcomeUnknown, Facts: reqFacts},
		}},
		{"stopped mid-stream", true, []modelExchange{{path: "/v1/messages", ctype: "text/event-stream", status: 200, req: delegateReq, res: delegateRes[:cutAt], noEnd: true}}, []modelSummary{
			req(2, reqFacts), {Kind: "end", Method: "messages", Seq: 2 + 1 + chunks(delegateRes[:cutAt]) + 1, Outcome: protocol.OutcomeUnknown, Facts: with(reqFacts, func(f *protocol.ModelCall) { f.Status = 200 })},
		}},
		{"not a model path", false, []modelExchange{{path: "/v1/models", ctype: "application/json", status: 200, req: []byte(`{}`), res: []byte(`{}`)}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, decodeModel(t, c.stop, c.xs...)); diff != "" {
				t.Errorf("model events (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzAnthropicDecoder: whatever a model call's bodies hold and however
// they are cut, the decoder does not panic, each model call's Request is
// answered by exactly one Response or End, and nothing is held after.
func FuzzAnthropicDecoder(f *testing.F) {
	f.Add(string(modelTestdata(f, "requests", "idle-2-delegate.json")), string(modelTestdata(f, "sse", "idle-2-delegate.sse")), "text/event-stream", 200, 97, false)
	f.Add(string(modelTestdata(f, "requests", "native-4-ack.json")), string(modelTestdata(f, "sse", "native-4-ack.sse")), "text/event-stream", 200, 5, true)
	f.Add(`{"model":"m","messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"x","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"b"}]}]}`, `{"type":"error","error":{"type":"overloaded_error","message":"o"}}`, "application/json", 529, 3, false)
	f.Add(`{`, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: error\ndata: [\n\n", "text/event-stream", 200, 1, true)
	f.Fuzz(func(t *testing.T, req, res, ctype string, status, cut int, stop bool) {
		if cut < 1 || cut > 4096 {
			cut = 64
		}
		d := protocol.NewHTTPDecoder(nil)
		open := map[*protocol.Call]int{}
		emit := func(ev *protocol.Event) {
			if ev.Protocol != protocol.Anthropic {
				return
			}
			if ev.Call == nil || ev.Model == nil {
				t.Fatalf("a model event without its call or facts: %+v", ev)
			}
			switch ev.Kind {
			case protocol.KindRequest:
				open[ev.Call]++
			case protocol.KindResponse, protocol.KindEnd:
				if open[ev.Call] != 1 {
					t.Fatalf("%s of a call requested %d times", ev.Kind, open[ev.Call])
				}
				delete(open, ev.Call)
			}
		}
		x := modelExchange{path: "/v1/messages", ctype: ctype, status: status, req: []byte(req), res: []byte(res), cut: cut, noEnd: stop}
		var last bundle.Event
		for i, ev := range x.events("h1") {
			ev.Seq = uint64(i + 1)
			d.Feed(&ev, emit)
			last = ev
		}
		if stop {
			last.Seq++
			d.Stop(&last, "the bundle ended", emit)
		}
		if len(open) != 0 {
			t.Fatalf("%d model calls left open", len(open))
		}
		if !stop && d.Held() != 0 { // a stopped exchange is held for its late end
			t.Fatalf("%d held after the exchange ended", d.Held())
		}
	})
}
