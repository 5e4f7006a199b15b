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

// FuzzEventStream cuts a fuzzed body into fuzzed chunks: an EventStream must
// not panic, must record every byte of a body that holds no secret as it
// came, and the recorded body must hold no secret whole.
func FuzzEventStream(f *testing.F) {
	f.Add(strings.Join(anthropicStream("ACK:"+deltaSecret, "", 32, sseWrap), ""), uint8(7))
	f.Add("data: x\r\n\r\ndata: y\n\nevent: z", uint8(1))
	f.Fuzz(func(t *testing.T, body string, n uint8) {
		if n == 0 {
			return
		}
		for _, secrets := range [][]string{nil, {deltaSecret}} {
			red := New(secrets, []string{"no-such-field"})
			s := NewEventStream(red)
			var rec []byte
			for c := range inPieces(body, int(n)) {
				rec = append(rec, red.Bytes(s.Next([]byte(c)), red.Snapshot())...)
			}
			rec = append(rec, red.Bytes(s.Flush(true), red.Snapshot())...)
			if secrets == nil && string(rec) != body {
				t.Fatalf("a body without secrets was recorded as %q, not %q", rec, body)
			}
			if secrets != nil && strings.Contains(string(rec), deltaSecret) {
				t.Fatalf("the secret was recorded: %q", rec)
			}
		}
	})
}

func TestEventLen(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"data: a\n\nrest", 9}, {"data: a\r\n\r\nrest", 11}, {"data: a\r\rrest", 9},
		{"data: a\r\n\ndata", 10}, {"data: a\n", -1}, {"data: a\r\n\r", -1}, {"", -1}, {"\n\n", 2},
	} {
		if got := EventLen([]byte(tc.in)); got != tc.want {
			t.Errorf("EventLen(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
