package bundle

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAppendEncoded checks that an event encoded before its append gets the
// seq and t of its place in the bundle, whatever order producers encoded in.
func TestAppendEncoded(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), &WriterOptions{Clock: stepClock(1000), FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	first := &Event{Kind: KindWSMessage, Conn: "ws1", Body: Text([]byte(`{"n":1}`))}
	second := &Event{Kind: KindMark, Name: "phase", Body: Text([]byte(`{"n":2}`))}
	e1, err := Encode(first)
	if err != nil {
		t.Fatal(err)
	}
	e2, err := Encode(second)
	if err != nil {
		t.Fatal(err)
	}
	// Appended in the other order than encoded.
	if seq, err := w.AppendEncoded(e2); err != nil || seq != 1 {
		t.Fatalf("AppendEncoded(second) = %d, %v; want 1, nil", seq, err)
	}
	if seq, err := w.AppendEncoded(e1); err != nil || seq != 2 {
		t.Fatalf("AppendEncoded(first) = %d, %v; want 2, nil", seq, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r)
	want := []Event{
		{Seq: 1, T: second.T, Kind: KindMark, Name: "phase", Body: Text([]byte(`{"n":2}`))},
		{Seq: 2, T: first.T, Kind: KindWSMessage, Conn: "ws1", Body: Text([]byte(`{"n":1}`))},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if second.T > first.T {
		t.Errorf("t went backwards: %d then %d", second.T, first.T)
	}
}

// TestBackgroundErrorIsSticky checks that a write error met by the
// compressor on a batch nobody waits for is returned by the next call.
func TestBackgroundErrorIsSticky(t *testing.T) {
	boom := errors.New("disk full")
	fw := &failingWriter{n: 1 << 20, err: boom}
	w, err := NewWriter(fw, testHeader(), &WriterOptions{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	fw.n = 0
	body := Text([]byte(strings.Repeat("x", 1024)))
	var appendErr error
	// Enough bytes to fill many batches: the compressor writes them without
	// any flush, fails, and a later Append reports it.
	for i := 0; i < 64*batchBytes/1024 && appendErr == nil; i++ {
		_, appendErr = w.Append(&Event{Kind: KindWSMessage, Body: body})
	}
	if !errors.Is(appendErr, boom) {
		t.Errorf("Append after the compressor failed = %v, want %v", appendErr, boom)
	}
	if err := w.Flush(); !errors.Is(err, boom) {
		t.Errorf("Flush = %v, want %v", err, boom)
	}
	if err := w.Close(); !errors.Is(err, boom) {
		t.Errorf("Close = %v, want %v", err, boom)
	}
}
