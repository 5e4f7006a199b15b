package cassette_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/cassette"
	"github.com/wireproof/wireproof/playback"
)

// TestPacing: a recorded answer keeps its recorded latency and gaps
// (chunks at 200 ms and 500 ms after the request), and Fast plays the same
// bytes without them.
func TestPacing(t *testing.T) {
	const req = `{"model":"m","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	sh, err := cassette.ParseShape("/v1/messages", []byte(req))
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	x := &playback.Exchange{ID: "model-h1", Seq: 1, Method: "POST", Body: []byte(req), ReqT: 1000 * ms,
		Status: 200, RespHeader: http.Header{"Content-Type": {"text/event-stream"}}, RespT: 1200 * ms,
		Chunks: []playback.Chunk{{T: 1200 * ms, Data: []byte("event: ping\ndata: {\"type\":\"ping\"}\n\n")}, {T: 1500 * ms, Data: []byte("event: ping\ndata: {\"type\":\"ping\"}\n\n")}}}
	c := &cassette.Cassette{Calls: []*cassette.Call{{Bundle: "tape.zst", Conn: "model-h1", Seq: 1, Shape: sh, Exchange: x}}}
	for _, fast := range []bool{false, true} {
		s, err := model.Serve(context.Background(), "", cassette.NewHandler(c, &cassette.Options{Fast: fast}))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(req))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		s.Close()
		if string(b) != string(x.Chunks[0].Data)+string(x.Chunks[1].Data) {
			t.Errorf("fast=%v: body %q", fast, b)
		}
		if !fast && took < 500*time.Millisecond {
			t.Errorf("paced: answered in %v, before the recorded 500 ms", took)
		}
	}
}

// TestReplayBindsRedactedSecret: a secret the recorder redacted is
// [REDACTED] in a recorded request and its answer; played to a request
// that has this run's secret in its place, the answer carries it.
func TestReplayBindsRedactedSecret(t *testing.T) {
	const rec = `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_wpAAAAAAAAAA","content":"{\"result\":\"[REDACTED]\"}"}]}]}`
	const live = `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_wpAAAAAAAAAA","content":"{\"result\":\"s3cr3t-of-this-run\"}"}]}]}`
	sh, err := cassette.ParseShape("/v1/messages", []byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	answer := `{"id":"msg_wp1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ACK:[REDACTED]"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	x := &playback.Exchange{ID: "model-h1", Seq: 1, Method: "POST", Body: []byte(rec), Status: 200,
		RespHeader: http.Header{"Content-Type": {"application/json"}}, Chunks: []playback.Chunk{{Data: []byte(answer)}}}
	c := &cassette.Cassette{Calls: []*cassette.Call{{Bundle: "tape.zst", Conn: "model-h1", Seq: 1, Shape: sh, Exchange: x}}}
	s, err := model.Serve(context.Background(), "", cassette.NewHandler(c, &cassette.Options{Fast: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(live))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"ACK:s3cr3t-of-this-run"`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}
