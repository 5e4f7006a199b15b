package bundle

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
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

// TestHugeJSONPayloadNotCopied: a JSON payload above bigLine goes to the
// compressor by reference, between the start and the end of its line, and
// one from copyBody to bigLine is copied from the event into the batch
// once; the bundle reads back the same, with the trailer's byte count and
// digest right, among short lines on both sides.
func TestHugeJSONPayloadNotCopied(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), &WriterOptions{Clock: stepClock(1000), FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	huge := []byte(`{"threads":[` + strings.Repeat(`{"id":"thr_1","state":"idle"},`, bigLine/29+1) + `{}]}`)
	events := []Event{
		{Kind: KindWSMessage, Conn: "ws1", Body: Text([]byte(`{"n":1}`))},
		{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Body: Text(huge), Size: int64(len(huge)) + 7, Truncated: true, Err: "cut"},
		{Kind: KindMark, Name: "after", Body: Text([]byte(`{"n":3}`))},
		{Kind: KindHTTPBody, Conn: "h1", Dir: DirServerToClient, Body: Text([]byte(`["` + strings.Repeat("x", 20<<10-4) + `"]`))},
		{Kind: KindHTTPBody, Conn: "h1", Dir: DirServerToClient, Body: Text([]byte(`["` + strings.Repeat("y", copyBody-4) + `"]`))},
		{Kind: KindHTTPBody, Conn: "h1", Dir: DirServerToClient, Body: Text([]byte(`["` + strings.Repeat("z", copyBody-5) + `"]`))},
		{Kind: KindMark, Name: "end", Body: Text([]byte(`{"n":7}`))},
	}
	for _, i := range []int{3, 4, 5} {
		if payloadEncoding(events[i].Body) != EncodingJSON {
			t.Fatalf("event %d: the test's payload is not JSON", i)
		}
	}
	for i := range events {
		ev := events[i]
		e, err := Encode(&ev)
		if err != nil {
			t.Fatal(err)
		}
		if byRef := e.body != nil && !e.inline; byRef != (i == 1) {
			t.Fatalf("event %d: payload by reference %v", i, byRef)
		}
		if e.inline != (i == 3 || i == 4) {
			t.Fatalf("event %d: payload copied into the batch at the append %v", i, e.inline)
		}
		if _, err := w.AppendEncoded(e); err != nil {
			t.Fatal(err)
		}
		events[i].Seq, events[i].T = ev.Seq, ev.T
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf, &ReaderOptions{MaxLine: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r)
	// Byte slices compared whole: go-cmp's element-wise diff of a 1 MiB
	// payload takes minutes under -race.
	if diff := cmp.Diff(events, got, cmp.Comparer(bytes.Equal)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// The reader checked the trailer's digest against the lines.
	if tr := r.Trailer(); tr == nil || tr.Events != 8 {
		t.Errorf("trailer %+v, want one counting the header and 7 events", tr)
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

// gatedWriter holds every Write once hold is set, until open is closed.
type gatedWriter struct {
	hold    atomic.Bool
	open    chan struct{}
	entered chan struct{} // receives once a Write waits
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	if g.hold.Load() {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		<-g.open
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

func (g *gatedWriter) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Len()
}

// TestFlushWaitsForAFlushInFlight: Flush returns only once everything
// appended before it is written, also when the flush that writes it was asked
// for by someone else (an event that flushes at once) and is still on its
// way. The WebSocket recorder reuses a big message's buffer after Flush.
func TestFlushWaitsForAFlushInFlight(t *testing.T) {
	g := &gatedWriter{open: make(chan struct{}), entered: make(chan struct{}, 1)}
	w, err := NewWriter(g, testHeader(), &WriterOptions{Clock: stepClock(1000), FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	before := g.len()
	g.hold.Store(true)
	appended := make(chan error, 1)
	go func() {
		_, err := w.Append(&Event{Kind: KindMark, Name: "flushes at once"})
		appended <- err
	}()
	<-g.entered // the mark's flush is at the gate
	var opened atomic.Bool
	go func() {
		time.Sleep(20 * time.Millisecond)
		opened.Store(true)
		close(g.open)
	}()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !opened.Load() || g.len() == before {
		t.Fatal("Flush returned before the flush in flight was written")
	}
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
