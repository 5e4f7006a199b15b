package bundle

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// modelRequests writes a bundle the way a real-CLI run records one: every
// 500 ms a model request whose body repeats the same ~50 KB prefix (system
// prompt, tools, the conversation so far) with a new turn at its end, and a
// streamed answer, with the Writer's 100 ms flush and its lifecycle flushes
// in between, on a clock that advances as the run would. It returns the
// stored bundle and the decompressed bytes written.
func modelRequests(t testing.TB, requests int, o WriterOptions) ([]byte, int64) {
	t.Helper()
	prefix := fakePrompt(50 << 10)
	var now int64
	o.Clock = func() int64 { return now }
	o.FlushInterval = time.Hour // the 100 ms tick is driven below, on the fake clock
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), &o)
	if err != nil {
		t.Fatal(err)
	}
	add := func(ev Event) {
		t.Helper()
		if _, err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
	}
	tick := func(d time.Duration) { // d passes, with a flush every 100 ms
		for end := now + int64(d); now < end; {
			now = min(now+int64(100*time.Millisecond), end)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(Event{Kind: KindProcStart, Conn: "server", Attrs: []byte(`{"argv":["t3"],"pid":7}`)})
	for i := range requests {
		conn := fmt.Sprintf("h%d", i+1)
		body := fmt.Appendf(bytes.Clone(prefix), `,{"role":"user","content":"turn %d: run the tool again"}]}`, i)
		add(Event{Kind: KindHTTPRequest, Conn: conn, Method: "POST", URL: "/v1/messages",
			Header: map[string][]string{"Content-Type": {"application/json"}}})
		add(Event{Kind: KindHTTPBody, Conn: conn, Dir: DirClientToServer, Body: Text(body)})
		tick(100 * time.Millisecond)
		add(Event{Kind: KindHTTPResponse, Conn: conn, Status: 200,
			Header: map[string][]string{"Content-Type": {"text/event-stream"}}})
		for j := range 5 {
			add(Event{Kind: KindHTTPBody, Conn: conn, Dir: DirServerToClient,
				Body: Text(fmt.Appendf(nil, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"part %d of answer %d\"}}\n\n", j, i))})
			tick(50 * time.Millisecond)
		}
		add(Event{Kind: KindHTTPEnd, Conn: conn, Size: int64(len(body))})
		add(Event{Kind: KindMark, Name: "phase", Body: Text(fmt.Appendf(nil, `{"phase":"turn %d"}`, i))})
		tick(150 * time.Millisecond)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res := readBytes(buf.Bytes())
	if res.err != nil || res.truncated || len(res.events) != 1+requests*10 {
		t.Fatalf("read back: err %v, truncated %v, %d events", res.err, res.truncated, len(res.events))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(buf.Bytes()), w.bytes
}

// fakePrompt is n bytes of JSON that look like a model request's prefix:
// words drawn from a vocabulary by a fixed pseudo-random sequence, so that
// it compresses about as well as English on its own (not as a repeat).
func fakePrompt(n int) []byte {
	words := []string{"the", "tool", "file", "read", "write", "path", "agent", "must", "never", "always",
		"output", "input", "schema", "string", "object", "array", "type", "description", "properties",
		"required", "command", "run", "shell", "edit", "search", "result", "error", "user", "assistant",
		"system", "context", "token", "limit", "when", "then", "if", "a", "an", "of", "to", "in", "with"}
	b := []byte(`{"model":"claude-sonnet-4","max_tokens":8192,"system":"`)
	x := uint32(2463534242)
	for len(b) < n-64 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b = append(b, words[x%uint32(len(words))]...)
		if x%7 == 0 {
			b = append(b, ". "...)
		} else {
			b = append(b, ' ')
		}
	}
	return append(b, `","messages":[{"role":"user","content":"start"}`...)
}

// TestRepeatedPrefixCompresses: a run whose model requests repeat a 50 KB
// prefix every 500 ms stays a small fraction of its input, because the
// Writer's flushes end zstd blocks, not frames, and a frame (with its
// compressor history) lasts FrameInterval; ending a frame at every flush, as
// format 2 first did, loses the history and the repeat.
func TestRepeatedPrefixCompresses(t *testing.T) {
	const requests = 120 // 60 s
	data, in := modelRequests(t, requests, WriterOptions{})
	perFlush, _ := modelRequests(t, requests, WriterOptions{frameFlushes: 1})
	t.Logf("%d requests, %d bytes in: %d bytes stored (%.1f%%); a frame per flush: %d bytes (%.1f%%)",
		requests, in, len(data), 100*float64(len(data))/float64(in), len(perFlush), 100*float64(len(perFlush))/float64(in))
	if frames := bytes.Count(data, skippableMagic); frames > 2+requests/2/int(DefaultFrameInterval/time.Second)+1 {
		t.Errorf("%d frames in %d s of recording: more than one per %v", frames, requests/2, DefaultFrameInterval)
	}
	if len(data)*20 > int(in) {
		t.Errorf("stored %d bytes for %d in: more than 5%%", len(data), in)
	}
	if len(data)*3 > len(perFlush) {
		t.Errorf("stored %d bytes, a frame per flush %d: less than 3x smaller", len(data), len(perFlush))
	}
}
