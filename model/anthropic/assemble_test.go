package anthropic_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/model/anthropic"
)

func sse(events ...string) string { return strings.Join(events, "") }

func ev(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

const (
	start    = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`
	textOpen = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	textHi   = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`
	stop0    = `{"type":"content_block_stop","index":0}`
	toolOpen = `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}`
	toolIn1  = `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\":"}}`
	toolIn2  = `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"ls\"}"}}`
	stop1    = `{"type":"content_block_stop","index":1}`
	mdTool   = `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":9}}`
	mdEnd    = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`
	mstop    = `{"type":"message_stop"}`
	ping     = `{"type":"ping"}`
)

// problems feeds a stream and lists its problems as "kind event: msg".
func problems(t *testing.T, stream string) (*anthropic.Assembler, []string) {
	t.Helper()
	a := anthropic.NewAssembler()
	var got []string
	err := anthropic.ReadEvents(strings.NewReader(stream), func(name string, data []byte) error {
		if err := a.Feed(name, data); err != nil {
			var se *anthropic.StreamError
			if !errors.As(err, &se) {
				return err
			}
			got = append(got, se.Kind+" "+se.Error())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, got
}

func TestAssemblerGrammar(t *testing.T) {
	cases := []struct {
		name   string
		stream string
		want   []string
	}{
		{"text and tool", sse(ev("message_start", start), ev("ping", ping), ev("content_block_start", textOpen), ev("content_block_delta", textHi), ev("content_block_stop", stop0),
			ev("content_block_start", toolOpen), ev("content_block_delta", toolIn1), ev("content_block_delta", toolIn2), ev("content_block_stop", stop1), ev("message_delta", mdTool), ev("message_stop", mstop)), nil},
		{"not JSON", sse(ev("message_start", start), ev("content_block_start", textOpen), ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`)),
			[]string{"malformed content_block_delta: data is not a JSON event: unexpected end of JSON input"}},
		{"name and type differ", sse(ev("message_start", start), ev("message_stop", mdEnd)),
			[]string{`malformed message_stop: the event named "message_stop" carries data of type "message_delta"`}},
		{"before message_start", sse(ev("content_block_start", textOpen)), []string{"order content_block_start: content_block_start before message_start"}},
		{"two message_starts", sse(ev("message_start", start), ev("message_start", start)), []string{"order message_start: a second message_start"}},
		{"block index skipped", sse(ev("message_start", start), ev("content_block_start", toolOpen)), []string{"order content_block_start: block index 1, expected 0"}},
		{"block inside a block", sse(ev("message_start", start), ev("content_block_start", textOpen), ev("content_block_start", strings.Replace(textOpen, `"index":0`, `"index":1`, 1))),
			[]string{"order content_block_start: block 1 starts while block 0 is open"}},
		{"delta of a closed block", sse(ev("message_start", start), ev("content_block_start", textOpen), ev("content_block_stop", stop0), ev("content_block_delta", textHi)),
			[]string{"order content_block_delta: a delta for block 0, which is not open"}},
		{"JSON delta for text", sse(ev("message_start", start), ev("content_block_start", textOpen), ev("content_block_delta", strings.Replace(toolIn1, `"index":1`, `"index":0`, 1))),
			[]string{"malformed content_block_delta: a input_json_delta delta for a text block"}},
		{"tool input not JSON", sse(ev("message_start", start), ev("content_block_start", textOpen), ev("content_block_stop", stop0), ev("content_block_start", toolOpen), ev("content_block_delta", toolIn1), ev("content_block_stop", stop1)),
			[]string{`malformed content_block_stop: the input of tool_use toolu_1 (Bash) is not JSON: "{\"command\":"`}},
		{"message_delta with a block open", sse(ev("message_start", start), ev("content_block_start", textOpen), ev("message_delta", mdEnd)),
			[]string{"order message_delta: message_delta while block 0 is open"}},
		{"message_stop without message_delta", sse(ev("message_start", start), ev("message_stop", mstop)),
			[]string{"order message_stop: message_stop without a message_delta (no stop_reason)"}},
		{"after message_stop", sse(ev("message_start", start), ev("message_delta", mdEnd), ev("message_stop", mstop), ev("ping", ping), ev("message_delta", mdEnd)),
			[]string{"order message_delta: an event after message_stop"}},
		{"after an error", sse(ev("message_start", start), ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), ev("message_stop", mstop)),
			[]string{"order message_stop: an event after error"}},
		{"unknown types are skipped", sse(ev("message_start", start), ev("future_event", `{"type":"future_event"}`), ev("message_delta", mdEnd), ev("message_stop", mstop)), nil},
		{"unnamed events take their type", sse("data: "+start+"\n\n", "data: "+mdEnd+"\n\n", "data: "+mstop+"\n\n"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got := problems(t, c.stream)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssemblerMessage(t *testing.T) {
	a, got := problems(t, sse(ev("message_start", start), ev("content_block_start", textOpen), ev("content_block_delta", textHi), ev("content_block_stop", stop0),
		ev("content_block_start", toolOpen), ev("content_block_delta", toolIn1), ev("content_block_delta", toolIn2), ev("content_block_stop", stop1), ev("message_delta", mdTool), ev("message_stop", mstop)))
	if len(got) > 0 || !a.Complete() {
		t.Fatalf("problems %v, complete %v", got, a.Complete())
	}
	want := &anthropic.Response{ID: "msg_1", Type: "message", Role: "assistant", Model: "m",
		Content:    []anthropic.Block{{Type: "text", Text: "hi"}, {Type: "tool_use", ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
		StopReason: anthropic.StopToolUse, Usage: anthropic.Usage{InputTokens: 5, OutputTokens: 9}}
	if diff := cmp.Diff(want, a.Message()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	_, got = problems(t, sse(ev("message_start", start), ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)))
	if len(got) > 0 {
		t.Errorf("an error event is not a problem of the grammar: %v", got)
	}
}

// TestEventsRoundTrip: what Events writes assembles back into the message.
func TestEventsRoundTrip(t *testing.T) {
	msg := &anthropic.Response{ID: "msg_2", Type: "message", Role: "assistant", Model: "m",
		Content:    []anthropic.Block{{Type: "text", Text: "héllo wörld, a longer text split in deltas ✓"}, {Type: "tool_use", ID: "toolu_2", Name: "Read", Input: json.RawMessage(`{"file_path":"/tmp/ü.output"}`)}},
		StopReason: anthropic.StopToolUse, Usage: anthropic.Usage{InputTokens: 100, OutputTokens: 20}}
	for _, chunk := range []int{1, 3, 32, 1000} {
		var buf bytes.Buffer
		w := anthropic.NewStreamWriter(&buf)
		for _, e := range anthropic.Events(msg, &anthropic.StreamOptions{Chunk: chunk}) {
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
		}
		a, got := problems(t, buf.String())
		if len(got) > 0 || !a.Complete() {
			t.Fatalf("chunk %d: problems %v", chunk, got)
		}
		if diff := cmp.Diff(msg, a.Message()); diff != "" {
			t.Errorf("chunk %d (-want +got):\n%s", chunk, diff)
		}
	}
}

func TestContentShapes(t *testing.T) {
	var m anthropic.Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":"hi"}`), &m); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(anthropic.Content{{Type: "text", Text: "hi"}}, m.Content); diff != "" {
		t.Error(diff)
	}
	var b anthropic.Block
	if err := json.Unmarshal([]byte(`{"type":"tool_result","tool_use_id":"t","content":"out","is_error":true,"cache_control":{"type":"ephemeral"}}`), &b); err != nil {
		t.Fatal(err)
	}
	if b.Content.Text() != "out" || !b.IsError {
		t.Errorf("%+v", b)
	}
	if err := json.Unmarshal([]byte(`{"role":"user","content":{"x":1}}`), &m); err == nil {
		t.Error("an object as content was accepted")
	}
	out, _ := json.Marshal(anthropic.Block{Type: "text"})
	if string(out) != `{"type":"text","text":""}` {
		t.Errorf("empty text block written as %s", out)
	}
}

func TestReadEventsLineEnds(t *testing.T) {
	var got []string
	err := anthropic.ReadEvents(strings.NewReader(": comment\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\nevent: b\rdata: 3\r\rdata: 4\n\nevent: c\ndata: cut"), func(name string, data []byte) error {
		got = append(got, fmt.Sprintf("%s=%q", name, data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`a="1\n2"`, `b="3"`, `message="4"`}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// FuzzAssembler: any body splits and assembles without a panic, every
// problem is a StreamError of a known kind, and a message written by
// Events from the fuzzed text assembles back unchanged.
func FuzzAssembler(f *testing.F) {
	f.Add(sse(ev("message_start", start), ev("content_block_start", textOpen), ev("content_block_delta", textHi), ev("content_block_stop", stop0), ev("message_delta", mdEnd), ev("message_stop", mstop)), "hi", `{"a":1}`)
	f.Add(sse(ev("message_start", start), ev("content_block_start", toolOpen)), "", "{}")
	f.Add("data: {\n\n", "x\ny", `[1,2]`)
	f.Fuzz(func(t *testing.T, stream, text, input string) {
		a := anthropic.NewAssembler()
		_ = anthropic.ReadEvents(strings.NewReader(stream), func(name string, data []byte) error {
			if err := a.Feed(name, data); err != nil {
				var se *anthropic.StreamError
				if !errors.As(err, &se) || (se.Kind != anthropic.ProblemMalformed && se.Kind != anthropic.ProblemOrder) {
					t.Fatalf("problem %v (%T)", err, err)
				}
			}
			return nil
		})
		input = strings.ToValidUTF8(input, "?") // a tool input is marshalled JSON: valid UTF-8
		if !json.Valid([]byte(input)) {
			input = "{}"
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, []byte(input))
		msg := &anthropic.Response{ID: "m", Type: "message", Role: "assistant", Model: "x",
			Content:    []anthropic.Block{{Type: "text", Text: strings.ToValidUTF8(text, "?")}, {Type: "tool_use", ID: "t", Name: "n", Input: json.RawMessage(compact.Bytes())}},
			StopReason: anthropic.StopToolUse}
		var buf bytes.Buffer
		w := anthropic.NewStreamWriter(&buf)
		for _, e := range anthropic.Events(msg, &anthropic.StreamOptions{Chunk: 3}) {
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
		}
		b := anthropic.NewAssembler()
		if err := anthropic.ReadEvents(&buf, b.Feed); err != nil {
			t.Fatalf("own stream: %v", err)
		}
		got := b.Message()
		if !b.Complete() || got.Content[0].Text != msg.Content[0].Text || !bytes.Equal(got.Content[1].Input, msg.Content[1].Input) {
			t.Fatalf("round trip: %+v", got)
		}
	})
}
