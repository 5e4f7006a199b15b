package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestConcurrentAppend(t *testing.T) {
	const producers, each = 8, 200
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), &WriterOptions{FlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				ev := Event{Kind: KindWSMessage, Conn: "ws" + string(rune('a'+p)), Body: Text([]byte(`{"i":` + string(rune('0'+i%10)) + `}`))}
				if _, err := w.Append(&ev); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := w.Count(); got != producers*each {
		t.Errorf("Count() = %d, want %d", got, producers*each)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	events := readAll(t, r) // Next itself fails on a gap or a t going backwards
	perConn := map[string]int{}
	for _, ev := range events {
		perConn[ev.Conn]++
	}
	if len(events) != producers*each || len(perConn) != producers {
		t.Errorf("read %d events over %d connections, want %d over %d", len(events), len(perConn), producers*each, producers)
	}
}

func TestWriterClampsClock(t *testing.T) {
	times := []int64{50, 10, 70, 60}
	i := 0
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), &WriterOptions{Clock: func() int64 { i++; return times[(i-1)%len(times)] }})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for range 3 {
		ev := Event{Kind: KindMark, Name: "x"}
		if _, err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.T)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{50, 50, 70}, got); diff != "" {
		t.Errorf("event times (-want +got):\n%s", diff)
	}
}

func TestAppendRejects(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ev   Event
	}{
		{"no kind", Event{}},
		{"header", Event{Kind: KindHeader}},
		{"trailer", Event{Kind: KindTrailer}},
		{"attrs not JSON", Event{Kind: KindProcStart, Attrs: json.RawMessage(`{"a":`)}},
		{"attrs with a line break", Event{Kind: KindProcStart, Attrs: json.RawMessage("{\n}")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := w.Append(&tc.ev); err == nil {
				t.Errorf("Append(%+v) succeeded", tc.ev)
			}
		})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(&Event{Kind: KindMark}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
	}
	if w.Count() != 0 {
		t.Errorf("Count() = %d after only rejected appends", w.Count())
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct {
	n   int
	err error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, f.err
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriterErrorsAreSticky(t *testing.T) {
	boom := errors.New("disk full")
	fw := &failingWriter{n: 1 << 20, err: boom}
	w, err := NewWriter(fw, testHeader(), &WriterOptions{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	fw.n = 0
	_, err = w.Append(&Event{Kind: KindWSOpen, Conn: "ws1"}) // flushes at once
	if !errors.Is(err, boom) {
		t.Fatalf("Append = %v, want %v", err, boom)
	}
	fw.n = 1 << 20
	if _, err := w.Append(&Event{Kind: KindMark}); !errors.Is(err, boom) {
		t.Errorf("a later Append = %v, want the sticky %v", err, boom)
	}
	if err := w.Flush(); !errors.Is(err, boom) {
		t.Errorf("Flush = %v, want the sticky %v", err, boom)
	}
	if err := w.Close(); !errors.Is(err, boom) {
		t.Errorf("Close = %v, want the sticky %v", err, boom)
	}
}

func TestCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.zst")
	w, err := Create(path, testHeader(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(&Event{Kind: KindMark, Name: "run"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("bundle mode = %v, want 0600", mode)
	}
	if _, err := Create(path, testHeader(), nil); !errors.Is(err, os.ErrExist) {
		t.Errorf("Create over an existing bundle = %v, want an os.ErrExist error", err)
	}
	r, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r)
	if len(got) != 1 || got[0].Name != "run" || r.Trailer() == nil {
		t.Errorf("read back %+v, trailer %v", got, r.Trailer())
	}
}

// TestFlush checks what a concurrent reader of the file sees before Close:
// lifecycle kinds at once, other kinds after Flush or the flush interval.
func TestFlush(t *testing.T) {
	tests := []struct {
		name     string
		kind     Kind
		interval time.Duration
		flush    bool // call Flush before reading
		poll     bool // wait for the background flusher
	}{
		{"lifecycle kind is flushed by Append", KindWSOpen, time.Hour, false, false},
		{"Flush writes a pending message", KindWSMessage, time.Hour, true, false},
		{"flusher writes a pending message within the interval", KindWSMessage, 5 * time.Millisecond, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "live.zst")
			w, err := Create(path, testHeader(), &WriterOptions{FlushInterval: tc.interval})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if _, err := w.Append(&Event{Kind: tc.kind, Conn: "ws1", Body: Text([]byte(`{"hello":1}`))}); err != nil {
				t.Fatal(err)
			}
			if tc.flush {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			var n int
			if tc.poll {
				deadline := time.Now().Add(30 * time.Second)
				for n = countReadable(t, path); n == 0 && time.Now().Before(deadline); n = countReadable(t, path) {
					time.Sleep(time.Millisecond)
				}
			} else {
				n = countReadable(t, path)
			}
			if n != 1 {
				t.Errorf("a reader of the live file sees %d events, want 1", n)
			}
		})
	}
}

func TestNoFlushWithoutReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.zst")
	w, err := Create(path, testHeader(), &WriterOptions{FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Append(&Event{Kind: KindWSMessage, Body: Text([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	if n := countReadable(t, path); n != 0 {
		t.Errorf("a message is readable before any flush (%d events): the test of flushing proves nothing", n)
	}
}

// countReadable opens the bundle at path and counts the complete events in it.
func countReadable(t testing.TB, path string) int {
	t.Helper()
	r, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open live bundle: %v", err)
	}
	defer r.Close()
	n := 0
	var ev Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		n++
	}
}
