package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// The secret of these tests, longer than one delta, as the scenarios' is.
const deltaSecret = "sk-ant-api03-Zq7xW2pLm9vR4tYb8nC6dF1gH5jK3sA0eUoIiPyT"

// sseEvent is one server-sent event of a JSON data line.
func sseEvent(name string, v any) string {
	b, _ := json.Marshal(v)
	return "event: " + name + "\ndata: " + string(b) + "\n\n"
}

func jsonLine(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// chunks cuts s into pieces of at most n bytes (cut before a UTF-8
// sequence).
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		k := n
		for k > 0 && !utf8.RuneStart(s[k]) {
			k--
		}
		if k == 0 {
			_, k = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return append(out, s)
}

// anthropicStream is the events a Messages API streams text (and a tool's
// input) in: deltas of n bytes at index 0, and tool input at index 1.
func anthropicStream(text, input string, n int, wrap func(ev map[string]any) string) []string {
	out := []string{wrap(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "content": []any{}}}),
		wrap(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})}
	for _, c := range chunks(text, n) {
		out = append(out, wrap(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": c}}))
	}
	out = append(out, wrap(map[string]any{"type": "content_block_stop", "index": 0}))
	if input != "" {
		out = append(out, wrap(map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{}}}))
		for _, c := range chunks(input, n) {
			out = append(out, wrap(map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": c}}))
		}
		out = append(out, wrap(map[string]any{"type": "content_block_stop", "index": 1}))
	}
	return append(out, wrap(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}}),
		wrap(map[string]any{"type": "message_stop"}))
}

func sseWrap(ev map[string]any) string { return sseEvent(ev["type"].(string), ev) }

// fold joins the pieces of every keyed text of msgs as a client reads them,
// decoded with encoding/json (independently of the redactor's own reading):
// key → text. It fails the test on a message that is not valid.
func fold(t *testing.T, msgs []string) map[string]string { return foldMsgs(t, msgs, true) }

// foldMsgs is fold; unless strict, a message that is not a JSON object is
// skipped.
func foldMsgs(t *testing.T, msgs []string, strict bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range msgs {
		data := m
		if !strings.HasPrefix(strings.TrimLeft(m, " \t\r\n"), "{") {
			_, after, ok := strings.Cut(m, "data:")
			if !ok {
				if strict {
					t.Fatalf("an event without data: %q", m)
				}
				continue
			}
			data, _, _ = strings.Cut(strings.TrimPrefix(after, " "), "\n")
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			if strict {
				t.Fatalf("not valid JSON after redaction: %v: %q", err, data)
			}
			continue
		}
		str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
		prefix := ""
		if str(v, "type") == "stream_event" {
			prefix = "claude:"
			if p, ok := v["parent_tool_use_id"].(string); ok {
				prefix += p + ":"
			}
			v, _ = v["event"].(map[string]any)
		}
		typ := str(v, "type")
		switch {
		case typ == "content_block_start":
			b, _ := v["content_block"].(map[string]any)
			for _, k := range []string{"text", "thinking"} {
				if s, ok := b[k].(string); ok {
					out[fmt.Sprintf("%sblock %v", prefix, v["index"])] += s
					break
				}
			}
		case typ == "content_block_delta":
			d, _ := v["delta"].(map[string]any)
			for _, k := range []string{"text", "partial_json", "thinking"} {
				if s, ok := d[k].(string); ok {
					out[fmt.Sprintf("%sblock %v", prefix, v["index"])] += s
					break
				}
			}
		case strings.HasPrefix(typ, "response.") && strings.HasSuffix(typ, ".delta"):
			out[fmt.Sprintf("%s %s %v/%v", typ, str(v, "item_id"), v["output_index"], v["content_index"])] += str(v, "delta")
		case strings.HasPrefix(str(v, "method"), "item/") && strings.HasSuffix(str(v, "method"), "/delta"):
			p, _ := v["params"].(map[string]any)
			out[str(v, "method")+" "+str(p, "itemId")] += str(p, "delta")
		case str(v, "_tag") == "Chunk":
			// T3's thread stream, as its web client folds it: the text of
			// every thread.message-sent, by message.
			vals, _ := v["values"].([]any)
			for _, it := range vals {
				it, _ := it.(map[string]any)
				ev, _ := it["event"].(map[string]any)
				if str(ev, "type") != "thread.message-sent" {
					continue
				}
				p, _ := ev["payload"].(map[string]any)
				out["t3 "+str(p, "messageId")] += str(p, "text")
			}
		}
	}
	return out
}

// runDeltas passes msgs through a Deltas of red, redacts each message
// released on its own as the recorder does, and returns them, checking that
// every message comes back once, in order.
func runDeltas(t *testing.T, red *Redactor, msgs []string, ended bool) []string {
	t.Helper()
	d := NewDeltas(red)
	var out []string
	for _, m := range msgs {
		for _, b := range d.Next([]byte(m)) {
			out = append(out, string(red.Bytes(b, red.Snapshot())))
		}
	}
	for _, b := range d.Flush(ended) {
		out = append(out, string(red.Bytes(b, red.Snapshot())))
	}
	if len(out) != len(msgs) {
		t.Fatalf("%d messages in, %d out", len(msgs), len(out))
	}
	return out
}

// t3Stream is T3's thread stream of an assistant message streamed in
// pieces of n bytes, an Ack after each Chunk, as its WebSocket carries it.
func t3Stream(id, text string, n int) []string { return t3Batched(id, text, n, 1) }

// t3Sent is the value of a T3 Chunk that carries a piece of message id (or,
// streaming false, its end).
func t3Sent(id string, seq int, text string, streaming bool) any {
	return map[string]any{"kind": "event", "sequence": seq,
		"event": map[string]any{"id": fmt.Sprint("ev", seq), "threadId": "thr_1", "type": "thread.message-sent",
			"payload": map[string]any{"threadId": "thr_1", "messageId": id, "role": "assistant", "text": text, "turnId": "turn_1", "streaming": streaming}}}
}

// t3Chunk is a T3 Chunk of values.
func t3Chunk(values ...any) string {
	return jsonLine(map[string]any{"_tag": "Chunk", "requestId": 3, "values": values})
}

// t3Batched is t3Stream with per values in each Chunk, as T3 sends a stream
// faster than its client acks: an activity between the pieces, and the end
// in the Chunk of the last pieces.
func t3Batched(id, text string, n, per int) []string {
	out := []string{t3Chunk(map[string]any{"kind": "snapshot", "snapshotSequence": 1})}
	var vals []any
	for i, c := range chunks(text, n) {
		vals = append(vals, t3Sent(id, i+2, c, true))
		if per > 1 && i == 0 {
			vals = append(vals, map[string]any{"kind": "event", "sequence": 1000, "event": map[string]any{"type": "thread.activity-appended", "payload": map[string]any{"text": "tool"}}})
		}
		if len(vals) >= per {
			out = append(out, t3Chunk(vals...), jsonLine(map[string]any{"_tag": "Ack", "requestId": 3}))
			vals = nil
		}
	}
	return append(out, t3Chunk(append(vals, t3Sent(id, 99, "", false))...))
}

func TestDeltasFoldRedacted(t *testing.T) {
	openai := func(typ, item string, content int, text string, n int) []string {
		out := []string{sseEvent("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": map[string]any{"id": item}})}
		for _, c := range chunks(text, n) {
			out = append(out, sseEvent(typ, map[string]any{"type": typ, "item_id": item, "output_index": 0, "content_index": content, "delta": c}))
		}
		done := strings.TrimSuffix(typ, ".delta") + ".done"
		return append(out, sseEvent(done, map[string]any{"type": done, "item_id": item, "output_index": 0, "content_index": content, "text": "[REDACTED]"}),
			sseEvent("response.completed", map[string]any{"type": "response.completed"}))
	}
	codex := func(item, text string, n int) []string {
		var out []string
		for _, c := range chunks(text, n) {
			out = append(out, jsonLine(map[string]any{"method": "item/agentMessage/delta", "params": map[string]any{"threadId": "t", "turnId": "u", "itemId": item, "delta": c}}))
		}
		return append(out, jsonLine(map[string]any{"method": "item/completed", "params": map[string]any{"item": map[string]any{"id": item, "type": "agentMessage"}}}))
	}
	streamJSON := func(parent *string) func(ev map[string]any) string {
		return func(ev map[string]any) string {
			return jsonLine(map[string]any{"type": "stream_event", "event": ev, "parent_tool_use_id": parent, "session_id": "s"})
		}
	}
	tool := "toolu_7"
	toolInput := `{"command":"curl -H \"Authorization: Bearer ` + deltaSecret + `\" http://x"}`
	for _, tc := range []struct {
		name    string
		secrets []string
		msgs    []string
		want    map[string]string
	}{{
		name: "anthropic text and tool input", secrets: []string{deltaSecret},
		msgs: anthropicStream("ACK:"+deltaSecret, toolInput, 32, sseWrap),
		want: map[string]string{"block 0": "ACK:[REDACTED]", "block 1": `{"command":"curl -H \"Authorization: Bearer [REDACTED]\" http://x"}`},
	}, {
		name: "anthropic one byte per delta", secrets: []string{deltaSecret},
		msgs: anthropicStream("the key is "+deltaSecret+", keep it", "", 1, sseWrap),
		want: map[string]string{"block 0": "the key is [REDACTED], keep it"},
	}, {
		name: "a secret JSON-escaped in tool input", secrets: []string{"p@ss/wörd-9271"},
		msgs: anthropicStream("ok", `{"a":"p\u0040ss\/w\u00f6rd-9271"}`, 5, sseWrap),
		want: map[string]string{"block 0": "ok", "block 1": `{"a":"[REDACTED]"}`},
	}, {
		name: "two secrets, percent-encoded, in one text", secrets: []string{deltaSecret, "hunter2-pass"},
		msgs: anthropicStream("u=hunter2%2Dpass&k="+deltaSecret+"&z", "", 7, sseWrap),
		want: map[string]string{"block 0": "u=[REDACTED]&k=[REDACTED]&z"},
	}, {
		name: "openai output text", secrets: []string{deltaSecret},
		msgs: openai("response.output_text.delta", "msg_1", 0, deltaSecret, 24),
		want: map[string]string{"response.output_text.delta msg_1 0/0": "[REDACTED]"},
	}, {
		name: "openai arguments", secrets: []string{deltaSecret},
		msgs: openai("response.function_call_arguments.delta", "fc_1", 0, `{"cmd":"echo `+deltaSecret+`"}`, 24),
		want: map[string]string{"response.function_call_arguments.delta fc_1 0/0": `{"cmd":"echo [REDACTED]"}`},
	}, {
		name: "codex agent message", secrets: []string{deltaSecret},
		msgs: codex("item_1", "ACK:"+deltaSecret, 10),
		want: map[string]string{"item/agentMessage/delta item_1": "ACK:[REDACTED]"},
	}, {
		name: "t3 assistant message over its WebSocket stream", secrets: []string{deltaSecret},
		msgs: t3Stream("msg_9", "ACK:"+deltaSecret+" done", 11),
		want: map[string]string{"t3 msg_9": "ACK:[REDACTED] done"},
	}, {
		// Two messages are two texts: one ending as a secret begins, the
		// next beginning with the secret's rest, are not joined (the first
		// ends with the secret's stub, which a text is never recorded
		// ending with).
		name: "t3, two messages are two texts", secrets: []string{"correcthorsebattery0042"},
		msgs: append(t3Stream("msg_a", "x correcthorse", 40), t3Stream("msg_b", "battery0042", 40)...),
		want: map[string]string{"t3 msg_a": "x [REDACTED]", "t3 msg_b": "battery0042"},
	}, {
		name: "t3, several pieces to a Chunk", secrets: []string{deltaSecret},
		msgs: t3Batched("msg_9", "ACK:"+deltaSecret+" done", 5, 3),
		want: map[string]string{"t3 msg_9": "ACK:[REDACTED] done"},
	}, {
		// Two messages streamed at once, their pieces in the same Chunks:
		// each message's pieces join on their own.
		name: "t3, two messages interleaved in Chunks", secrets: []string{deltaSecret, "hunter2-pass"},
		msgs: func() []string {
			a, b := chunks("x "+deltaSecret, 6), chunks("hunter2-pass y", 3)
			var out []string
			for i := range max(len(a), len(b)) {
				var vals []any
				if i < len(a) {
					vals = append(vals, t3Sent("msg_a", 2*i, a[i], true))
				}
				if i < len(b) {
					vals = append(vals, t3Sent("msg_b", 2*i+1, b[i], true))
				}
				out = append(out, t3Chunk(vals...))
			}
			return append(out, t3Chunk(t3Sent("msg_a", 98, "", false), t3Sent("msg_b", 99, "", false)))
		}(),
		want: map[string]string{"t3 msg_a": "x [REDACTED]", "t3 msg_b": "[REDACTED] y"},
	}, {
		name: "claude stream-json, two parents", secrets: []string{deltaSecret},
		msgs: append(anthropicStream("A "+deltaSecret, "", 16, streamJSON(nil)), anthropicStream(deltaSecret+" B", "", 9, streamJSON(&tool))...),
		want: map[string]string{"claude:block 0": "A [REDACTED]", "claude:toolu_7:block 0": "[REDACTED] B"},
	}, {
		name: "a token field split across pieces is learned", secrets: nil,
		msgs: anthropicStream("x", `{"access_token":"tok-learned-across-4471","n":1}`, 6, sseWrap),
		want: map[string]string{"block 0": "x", "block 1": `{"access_token":"[REDACTED]","n":1}`},
	}, {
		name: "a block that begins with text", secrets: []string{deltaSecret},
		msgs: []string{sseWrap(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": "ACK:" + deltaSecret[:10]}}),
			sseWrap(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": deltaSecret[10:]}}),
			sseWrap(map[string]any{"type": "content_block_stop", "index": 0})},
		want: map[string]string{"block 0": "ACK:[REDACTED]"},
	}, {
		name: "no secret: unchanged", secrets: []string{deltaSecret},
		msgs: anthropicStream("plain text, nothing to hide", `{"a":1}`, 4, sseWrap),
		want: map[string]string{"block 0": "plain text, nothing to hide", "block 1": `{"a":1}`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			red := New(tc.secrets, nil)
			out := runDeltas(t, red, tc.msgs, true)
			if diff := cmp.Diff(tc.want, fold(t, out)); diff != "" {
				t.Errorf("folded text (-want +got):\n%s", diff)
			}
			for _, m := range out {
				for _, s := range append(tc.secrets, "tok-learned-across-4471") {
					if strings.Contains(m, s[:len(s)/2]) && strings.Contains(m, s[len(s)/2:]) {
						t.Errorf("a message holds the secret's halves: %q", m)
					}
				}
			}
			if tc.name == "no secret: unchanged" {
				if diff := cmp.Diff(tc.msgs, out); diff != "" {
					t.Errorf("messages changed (-in +out):\n%s", diff)
				}
			}
		})
	}
}

// TestDeltasNeverWritesMsg: a message given to Next keeps its bytes, also
// when its piece is rewritten (record's Close-time join compares what comes
// back with what it gave).
func TestDeltasNeverWritesMsg(t *testing.T) {
	red := New([]string{deltaSecret}, nil)
	d := NewDeltas(red)
	msgs := t3Stream("msg_1", "ACK:"+deltaSecret, 6)
	var given, out [][]byte
	for _, m := range msgs {
		b := []byte(m)
		given = append(given, b)
		out = append(out, d.Next(b)...)
	}
	out = append(out, d.Flush(true)...)
	changed := 0
	for i, m := range msgs {
		if string(given[i]) != m {
			t.Errorf("message %d was written into: %q", i, given[i])
		}
		if string(out[i]) != m {
			changed++
		}
	}
	if changed == 0 {
		t.Error("no message was rewritten: the test shows nothing")
	}
}

// TestDeltasHoldsOnlyWhatMayBeginASecret checks what each Next releases: a
// message at once when its text's tail cannot begin a secret; a held one
// and those behind it once the secret is decided; a text's end releasing it.
func TestDeltasHoldsOnlyWhatMayBeginASecret(t *testing.T) {
	delta := func(i int, s string) string {
		return jsonLine(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": s}})
	}
	ping := `{"type":"ping"}`
	stop := `{"type":"content_block_stop","index":0}`
	red := New([]string{deltaSecret}, nil)
	d := NewDeltas(red)
	var got [][]string
	for _, m := range []string{delta(0, "hello "), delta(0, "key sk-an"), ping, delta(1, "other"), delta(0, "t-api03"), delta(0, "-Zq7 no"), delta(0, " sk-"), stop, ping} {
		var rel []string
		for _, b := range d.Next([]byte(m)) {
			rel = append(rel, string(b))
		}
		got = append(got, rel)
	}
	want := [][]string{
		{delta(0, "hello ")},
		nil, // "sk-an" may begin the secret
		nil, // behind it
		nil,
		nil, // still may
		{delta(0, "key sk-an"), ping, delta(1, "other"), delta(0, "t-api03"), delta(0, "-Zq7 no")}, // decided: not the secret
		nil,                      // " sk-" may begin it
		{delta(0, " sk-"), stop}, // the text ended
		{ping},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("released per message (-want +got):\n%s", diff)
	}
	if rest := d.Flush(true); len(rest) != 0 {
		t.Errorf("Flush returned %q after everything was released", rest)
	}
}

// TestDeltasCut checks that a stream cut short drops a held tail that could
// begin a secret, and keeps every message valid.
func TestDeltasCut(t *testing.T) {
	red := New([]string{deltaSecret}, nil)
	msgs := anthropicStream("fine, then "+deltaSecret[:20], "", 8, sseWrap)
	msgs = msgs[:len(msgs)-3] // cut before the block's end
	out := runDeltas(t, red, msgs, false)
	if diff := cmp.Diff(map[string]string{"block 0": "fine, then "}, fold(t, out)); diff != "" {
		t.Errorf("folded text of a cut stream (-want +got):\n%s", diff)
	}
}

// TestDeltasCutAfterASecret: a stream cut right after a secret completed
// across pieces keeps "[REDACTED]" where the secret stood (the reader sees
// that something was taken out) and drops only what could begin another.
func TestDeltasCutAfterASecret(t *testing.T) {
	red := New([]string{deltaSecret}, nil)
	msgs := anthropicStream("ACK:"+deltaSecret, "", 8, sseWrap)
	msgs = msgs[:len(msgs)-3] // cut before the block's end
	out := runDeltas(t, red, msgs, false)
	if diff := cmp.Diff(map[string]string{"block 0": "ACK:" + Redacted}, fold(t, out)); diff != "" {
		t.Errorf("folded text of a stream cut after a secret (-want +got):\n%s", diff)
	}
}

// TestDeltasLearnedLate checks that a secret added to the Redactor after a
// stream began is redacted from the pieces still to come.
func TestDeltasLearnedLate(t *testing.T) {
	red := New(nil, nil)
	d := NewDeltas(red)
	msgs := anthropicStream("one "+deltaSecret+" two", "", 12, sseWrap)
	var out []string
	for i, m := range msgs {
		if i == 2 {
			red.Add(deltaSecret)
		}
		for _, b := range d.Next([]byte(m)) {
			out = append(out, string(b))
		}
	}
	for _, b := range d.Flush(true) {
		out = append(out, string(b))
	}
	if got := fold(t, out)["block 0"]; got != "one [REDACTED] two" {
		t.Errorf("folded = %q", got)
	}
}

// TestDeltasShapes checks what is read as a delta and what is left alone.
func TestDeltasShapes(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want string // the key, or "" for none
	}{
		{`{"type":"content_block_delta","index":2,"delta":{"type":"thinking_delta","thinking":"x"}}`, "anthropic|2"},
		{"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\":\"x\"}}\r\n\r\n", "anthropic|0"},
		{"data:{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\":\"x\"}}\n\n", "anthropic|0"},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"x"}}`, ""},
		{`{"type":"response.output_text.delta","item_id":"m","output_index":1,"content_index":0,"delta":"x"}`, "openai|response.output_text.delta|m|1|0|"},
		{`{"type":"response.output_text.delta","item_id":"m","delta":7}`, ""},
		{`{"method":"item/reasoning/textDelta","params":{"itemId":"i","contentIndex":0,"delta":"x"}}`, "codex|item/reasoning/textDelta|i|0|"},
		{`{"jsonrpc":"2.0","method":"item/agentMessage/delta","params":{"itemId":"i","delta":"x"}}`, "codex|item/agentMessage/delta|i||"},
		{`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"text":"x"}},"parent_tool_use_id":"t"}`, `claude|"t"|0`},
		{`{"type":"content_block_delta","index":0,"delta":{"text":"x"}} trailing`, ""},
		{"event: a\ndata: {\"type\":\"content_block_delta\"\ndata: ,\"index\":0}\n\n", ""},
		{`not json with delta`, ""},
		{`{"type":"content_block_delta","index":0,"delta":{"text":"x"`, ""},
	} {
		var sh deltaShape
		if shs := parseDelta(nil, []byte(tc.msg), false); len(shs) > 0 {
			sh = shs[0]
		}
		if sh.key != tc.want {
			t.Errorf("key of %q = %q, want %q", tc.msg, sh.key, tc.want)
		}
		if sh.key != "" && tc.msg[sh.tok.start:sh.tok.end] != `"x"` {
			t.Errorf("token of %q = %q", tc.msg, tc.msg[sh.tok.start:sh.tok.end])
		}
	}
}

// TestDeltasSplitAnywhere streams a text holding a secret (raw, and JSON
// escaped in tool input) cut at every pair of positions into three deltas
// and checks the folded text is the redacted text.
func TestDeltasSplitAnywhere(t *testing.T) {
	sec := "Zq-7&x/y\u00e9Q"
	text := "a " + sec + " b " + sec
	want := "a [REDACTED] b [REDACTED]"
	for i := 0; i <= len(text); i++ {
		for j := i; j <= len(text); j++ {
			if !utf8.ValidString(text[:i]) || !utf8.ValidString(text[i:j]) {
				continue
			}
			msgs := []string{sseWrap(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"text": text[:i]}}),
				sseWrap(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"text": text[i:j]}}),
				sseWrap(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"text": text[j:]}})}
			red := New([]string{sec}, nil)
			if got := fold(t, runDeltas(t, red, msgs, true))["block 0"]; got != want {
				t.Fatalf("cut at %d, %d: folded %q, want %q", i, j, got, want)
			}
		}
	}
}

// FuzzDeltas streams a fuzzed text as deltas of a fuzzed size in each shape,
// with a fuzzed message among them: Deltas must not panic, must return every
// message once in order, keep every valid message valid, and the folded
// text must hold no secret (the redacted text's own redaction is itself).
func FuzzDeltas(f *testing.F) {
	f.Add("ACK:"+deltaSecret, uint8(32), `{"type":"ping"}`)
	f.Add(`{"k":"`+deltaSecret+`\"}`, uint8(3), `{"type":"content_block_stop","index":0}`)
	f.Add("x%2D"+deltaSecret, uint8(1), `data: {"type":"content_block_delta","index":0,"delta":{"text":"sk-"}}`)
	f.Fuzz(func(t *testing.T, text string, n uint8, extra string) {
		if n == 0 || !utf8.ValidString(text) {
			return
		}
		var msgs []string
		switch n % 4 {
		case 0: // Anthropic server-sent events
			msgs = anthropicStream(text, text, int(n), sseWrap)
		case 1: // the Claude CLI's stream_event lines
			msgs = anthropicStream(text, text, int(n), func(ev map[string]any) string {
				return jsonLine(map[string]any{"type": "stream_event", "event": ev, "parent_tool_use_id": nil})
			})
		case 3: // T3's thread stream over its WebSocket, 1-4 values to a Chunk
			msgs = t3Batched("msg_1", text, int(n), 1+int(n/4)%4)
		default: // Codex app-server notifications, then OpenAI events
			for _, c := range chunks(text, int(n)) {
				msgs = append(msgs, jsonLine(map[string]any{"method": "item/agentMessage/delta", "params": map[string]any{"itemId": "i", "delta": c}}))
			}
			for _, c := range chunks(text, int(n)) {
				msgs = append(msgs, sseEvent("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": c}))
			}
			msgs = append(msgs, `{"method":"item/completed","params":{"item":{"id":"i"}}}`)
		}
		k := min(3, len(msgs))
		msgs = append(msgs[:k:k], append([]string{extra}, msgs[k:]...)...)
		red := New([]string{deltaSecret, "hunter2-pass"}, nil)
		d := NewDeltas(red)
		var out [][]byte
		for _, m := range msgs {
			out = append(out, d.Next([]byte(m))...)
		}
		out = append(out, d.Flush(true)...)
		if len(out) != len(msgs) {
			t.Fatalf("%d messages in, %d out", len(msgs), len(out))
		}
		// A caller that passes over what Passes (the recorder's Close-time
		// join) gets the same messages back.
		d2 := NewDeltas(New([]string{deltaSecret, "hunter2-pass"}, nil))
		var out2 [][]byte
		for _, m := range msgs {
			if d2.Passes([]byte(m)) {
				out2 = append(out2, []byte(m))
				continue
			}
			out2 = append(out2, d2.Next([]byte(m))...)
		}
		out2 = append(out2, d2.Flush(true)...)
		if diff := cmp.Diff(out, out2); diff != "" {
			t.Fatalf("skipping what Passes changed the messages (-Next +Passes):\n%s", diff)
		}
		var got []string
		for i, b := range out {
			b = red.Bytes(b, red.Snapshot())
			if msgs[i] == extra {
				var v map[string]any
				start, end, ok := jsonOf([]byte(msgs[i]))
				if !ok || json.Unmarshal([]byte(msgs[i][start:end]), &v) != nil || strings.Contains(msgs[i][end:], "data:") {
					continue // not a message fold reads
				}
				if s2, e2, ok := jsonOf(b); !ok || !json.Valid(b[s2:e2]) {
					t.Fatalf("valid message %q became %q", msgs[i], b)
				}
			}
			got = append(got, string(b))
		}
		for key, folded := range foldMsgs(t, got, false) {
			if r := red.Bytes([]byte(folded), red.Snapshot()); !bytes.Equal(r, []byte(folded)) {
				t.Fatalf("%s folded to %q, which still holds a secret (%q)", key, folded, r)
			}
		}
	})
}

// TestDeltasHoldIsBounded streams a long text one byte per delta that keeps
// an unfinished token field open: the text held is bounded, so the time is
// linear in the text, not quadratic.
func TestDeltasHoldIsBounded(t *testing.T) {
	red := New([]string{deltaSecret}, nil)
	text := `{"token":"` + strings.Repeat("a", 32<<10)
	msgs := anthropicStream(text, "", 1, sseWrap)
	out := runDeltas(t, red, msgs, true)
	if got := fold(t, out)["block 0"]; got != text {
		t.Errorf("folded text changed: %d bytes, want %d", len(got), len(text))
	}
}

// TestFold checks the reader's side: texts joined per key, handed on at
// their end (or Flush), with where each piece came from.
func TestFold(t *testing.T) {
	type got struct {
		Key  string
		Text string
		At   []uint64
	}
	var out []got
	f := NewFold(func(t *Folded) { out = append(out, got{t.Key, string(t.Text), t.At}) })
	msgs := anthropicStream("ACK:"+deltaSecret, `{"a":1}`, 32, sseWrap)
	msgs = append(msgs, `{"method":"item/agentMessage/delta","params":{"itemId":"m","delta":"par"}}`,
		`{"method":"item/agentMessage/delta","params":{"itemId":"m","delta":"tial"}}`)
	msgs = append(msgs, t3Stream("msg_3", "folded", 4)...)      // 13: a snapshot, then pieces and Acks
	msgs = append(msgs, t3Batched("msg_4", "batched", 2, 3)...) // 19: a snapshot, two Chunks of three values, an Ack between
	for i, m := range msgs {
		f.Add([]byte(m), uint64(i+1))
	}
	f.Flush()
	want := []got{
		{"anthropic|0", "ACK:" + deltaSecret, []uint64{2, 3, 4}}, // the block's start, empty, then its deltas
		{"anthropic|1", `{"a":1}`, []uint64{7}},
		{"t3|msg_3", "folded", []uint64{14, 16}},                           // ended by its streaming false
		{"t3|msg_4", "batched", []uint64{20, 20, 22, 22}},                  // its end in the last Chunk
		{"codex|item/agentMessage/delta|m||", "partial", []uint64{11, 12}}, // open until Flush
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("folded (-want +got):\n%s", diff)
	}
	ft := &Folded{Text: []byte("abcdefgh"), At: []uint64{1, 2, 2, 3}, Off: []int{0, 3, 3, 6}}
	for _, tc := range []struct{ start, end, pieces int }{{0, 3, 1}, {0, 4, 2}, {3, 6, 1}, {2, 7, 3}, {6, 8, 1}} {
		if n := ft.Pieces(tc.start, tc.end); n != tc.pieces {
			t.Errorf("Pieces(%d, %d) = %d, want %d", tc.start, tc.end, n, tc.pieces)
		}
	}
	if p := ft.Position(4); p != 2 {
		t.Errorf("Position(4) = %d, want 2", p)
	}
}
