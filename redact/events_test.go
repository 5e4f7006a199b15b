package redact

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// eventsOf splits a server-sent event body into its events.
func eventsOf(body string) []string {
	var out []string
	for body != "" {
		n := EventLen([]byte(body))
		if n < 0 {
			n = len(body)
		}
		out = append(out, body[:n])
		body = body[n:]
	}
	return out
}

// TestEventStreamChunked streams a model's answer holding a secret split
// across deltas as a body cut into chunks of every size, records each piece
// redacted on its own (as the recorder does), and checks the recorded
// body's folded text is the redacted text, whole or cut.
func TestEventStreamChunked(t *testing.T) {
	body := strings.Join(anthropicStream("ACK:"+deltaSecret, `{"k":"`+deltaSecret+`"}`, 32, sseWrap), "")
	want := map[string]string{"block 0": "ACK:[REDACTED]", "block 1": `{"k":"[REDACTED]"}`}
	for _, size := range []int{1, 2, 7, 31, 64, 200, len(body)} {
		red := New([]string{deltaSecret}, nil)
		s := NewEventStream(red)
		var rec []byte
		for c := range inPieces(body, size) {
			rec = append(rec, red.Bytes(s.Next([]byte(c)), red.Snapshot())...)
		}
		rec = append(rec, red.Bytes(s.Flush(true), red.Snapshot())...)
		if diff := cmp.Diff(want, fold(t, eventsOf(string(rec)))); diff != "" {
			t.Errorf("chunks of %d: folded (-want +got):\n%s", size, diff)
		}
		if bytes.Contains(rec, []byte(deltaSecret[:20])) {
			t.Errorf("chunks of %d: a piece of the secret was recorded: %q", size, rec)
		}
	}
}

// TestEventStreamNotEvents checks that a body that is no event stream
// passes as a Stream would pass it: every byte, secrets redacted.
func TestEventStreamNotEvents(t *testing.T) {
	body := strings.Repeat("x", maxEvent) + " " + deltaSecret + " tail"
	red := New([]string{deltaSecret}, nil)
	s := NewEventStream(red)
	var rec []byte
	for c := range inPieces(body, 4096) {
		rec = append(rec, red.Bytes(s.Next([]byte(c)), red.Snapshot())...)
	}
	rec = append(rec, red.Bytes(s.Flush(true), red.Snapshot())...)
	if want := strings.Repeat("x", maxEvent) + " [REDACTED] tail"; string(rec) != want {
		t.Errorf("recorded %d bytes ending %q", len(rec), rec[max(0, len(rec)-40):])
	}
}

// inPieces yields s in pieces of n bytes.
func inPieces(s string, n int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}
