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
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/klauspost/compress/zstd"
)

// testHeader is a fixed header so written bundles are reproducible.
func testHeader() Header {
	return Header{
		Tool:    "wireproof test",
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Manifest: Manifest{Scenario: "idle", Provider: "fake", Model: "m1", Revision: "abc123",
			Commands: [][]string{{"t3", "start"}}, Options: map[string]string{"timeout": "60"}},
	}
}

// stepClock returns a clock that advances by step on every call.
func stepClock(step int64) func() int64 {
	var mu sync.Mutex
	var now int64
	return func() int64 {
		mu.Lock()
		defer mu.Unlock()
		now += step
		return now
	}
}

// writeBundle writes events into a bundle in memory and returns its bytes.
// The events get their Seq and T set.
func writeBundle(t testing.TB, events []Event, closeIt bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), &WriterOptions{Clock: stepClock(1000), FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range events {
		if _, err := w.Append(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if closeIt {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
	}
	return bytes.Clone(buf.Bytes())
}

// readAll reads every event of a bundle, detached.
func readAll(t testing.TB, r *Reader) []Event {
	t.Helper()
	var out []Event
	for {
		var ev Event
		err := r.Next(&ev)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Next after %d events: %v", len(out), err)
		}
		ev.Detach()
		out = append(out, ev)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	want := sampleEvents()
	data := writeBundle(t, want, true)
	r, err := NewReader(bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := testHeader()
	h.Format = FormatVersion
	if diff := cmp.Diff(h, r.Header()); diff != "" {
		t.Errorf("Header (-want +got):\n%s", diff)
	}
	got := readAll(t, r)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for i, ev := range got {
		if ev.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d", i, ev.Seq)
		}
	}
	if r.Truncated() {
		t.Errorf("Truncated() = true (%s) for a closed bundle", r.TruncatedReason())
	}
	tr := r.Trailer()
	if tr == nil {
		t.Fatal("Trailer() = nil for a closed bundle")
	}
	if tr.Events != uint64(len(want)+1) {
		t.Errorf("trailer counts %d events, want %d", tr.Events, len(want)+1)
	}
	if tr.Kinds[KindWSMessage] != 6 || tr.Kinds[KindHeader] != 1 {
		t.Errorf("trailer kinds = %v", tr.Kinds)
	}
	if err := r.Next(new(Event)); err != io.EOF {
		t.Errorf("Next after the end = %v, want io.EOF", err)
	}
}

// TestReaderLineIsTheBundleEncoding checks that Line returns each line's own
// bytes, so the concatenation of header, events and trailer is the whole
// decompressed bundle.
func TestReaderLineIsTheBundleEncoding(t *testing.T) {
	data := writeBundle(t, sampleEvents(), true)
	r, err := NewReader(bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var lines bytes.Buffer
	lines.Write(append(r.Line(), '\n'))
	for {
		var ev Event
		err := r.Next(&ev)
		lines.Write(append(bytes.Clone(r.Line()), '\n'))
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(AppendEvent(nil, &ev)), string(r.Line())); diff != "" {
			t.Fatalf("Line() differs from the event's encoding (-want +got):\n%s", diff)
		}
	}
	plain := decompress(t, data)
	if diff := cmp.Diff(string(plain), lines.String()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestSkipBody(t *testing.T) {
	data := writeBundle(t, sampleEvents(), true)
	r, err := NewReader(bytes.NewReader(data), &ReaderOptions{SkipBody: func(k Kind) bool { return k != KindWSMessage }})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var bodies, skipped int
	for _, ev := range readAll(t, r) {
		switch {
		case ev.Kind == KindWSMessage && ev.Body.Data != nil:
			bodies++
		case ev.Kind != KindWSMessage && ev.Body.Data != nil:
			t.Errorf("%s event has a body although SkipBody said to skip it", ev.Kind)
		default:
			skipped++
		}
	}
	if bodies != 6 || skipped == 0 {
		t.Errorf("got %d ws.message bodies and %d skipped, want 6 and some", bodies, skipped)
	}
	if r.Trailer() == nil {
		t.Error("the trailer is checked even when bodies are skipped")
	}
}

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

func TestReaderErrors(t *testing.T) {
	good := writeBundle(t, sampleEvents()[:3], true)
	newer := func() []byte {
		var buf bytes.Buffer
		h := testHeader()
		h.Format = FormatVersion + 1
		w, err := NewWriter(&buf, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		return buf.Bytes()
	}()
	tests := []struct {
		name   string
		data   []byte
		opts   *ReaderOptions
		want   string // the whole error message
		atOpen bool
	}{
		{"empty file", nil, nil, "x.zst is not a wireproof bundle: the file is empty", true},
		{"not zstd", []byte("{\"seq\":0}\n"), nil, "x.zst is not a wireproof bundle: not zstd data", true},
		{"newer format", newer, nil, "x.zst is format 2; this wireproof reads format 1 or older: upgrade wireproof", true},
		{"not a header first", compress(t, `{"seq":0,"t":0,"kind":"mark"}`+"\n"), nil,
			`x.zst: line 1: the first line is not a header (seq 0, t 0, kind header): got seq 0, t 0, kind "mark"`, true},
		{"broken header", compress(t, "{\"seq\":0,\n"), nil,
			"x.zst: line 1: unreadable header: not a valid bundle line: want a key at byte 9", true},
		{"header cut short", compress(t, `{"seq":0,"t":0,"kind":"hea`), nil,
			"x.zst: line 1: unreadable header: the stream ends inside a line, 26 bytes of which were lost", true},
		{"no format", compress(t, `{"seq":0,"t":0,"kind":"header","json":{}}`+"\n"), nil,
			"x.zst: line 1: the header has no format version", true},
		{"gap in seq", recompress(t, good, func(lines [][]byte) [][]byte { return append(lines[:2:2], lines[3:]...) }), nil,
			"x.zst: line 3: seq 3 where 2 was due: the sequence has a gap or repeat", false},
		{"t backwards", recompress(t, good, func(lines [][]byte) [][]byte {
			lines[2] = bytes.Replace(lines[2], []byte(`"t":2000`), []byte(`"t":1`), 1)
			return lines
		}), nil, "x.zst: line 3: t 1 is earlier than the previous event's t 1000", false},
		{"bad line", recompress(t, good, func(lines [][]byte) [][]byte { lines[1] = []byte("nope"); return lines }), nil,
			"x.zst: line 2: not a valid bundle line: want '{' at byte 0", false},
		{"line over the cap", writeBundle(t, []Event{{Kind: KindMark, Body: Text(bytes.Repeat([]byte("x"), 2000))}}, true),
			&ReaderOptions{MaxLine: 1000}, "x.zst: line 2: line is longer than the cap of 1000 bytes (ReaderOptions.MaxLine)", false},
		{"trailer digest", recompress(t, good, func(lines [][]byte) [][]byte {
			lines[1] = bytes.Replace(lines[1], []byte("GET"), []byte("PUT"), 1)
			return lines
		}), nil, "trailer digest", false},
		{"trailer count", recompress(t, good, func(lines [][]byte) [][]byte {
			lines[4] = bytes.Replace(lines[4], []byte(`"events":4`), []byte(`"events":5`), 1)
			return lines
		}), nil, "x.zst: line 5: the trailer counts 5 lines before it, the bundle has 4", false},
		{"data after the trailer", recompress(t, good, func(lines [][]byte) [][]byte { return append(lines, lines[1]) }), nil,
			"x.zst: line 6: data after the trailer", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := &ReaderOptions{Name: "x.zst"}
			if tc.opts != nil {
				opts.MaxLine = tc.opts.MaxLine
			}
			r, err := NewReader(bytes.NewReader(tc.data), opts)
			if !tc.atOpen {
				if err != nil {
					t.Fatalf("NewReader: %v", err)
				}
				defer r.Close()
				for err == nil {
					err = r.Next(new(Event))
				}
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error = %v (%T), want a *FormatError", err, err)
			}
			if got := err.Error(); got != tc.want && !bytes.Contains([]byte(got), []byte(tc.want)) {
				t.Errorf("error = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTruncated(t *testing.T) {
	events := sampleEvents()
	full := writeBundle(t, events, false) // flushed, never closed: no frame end, no trailer
	tests := []struct {
		name       string
		data       []byte
		wantEvents int
		reason     string
	}{
		{"never closed", full, len(events), "after line 26, the zstd stream ends mid-frame (the recorder stopped before closing the bundle)"},
		{"cut mid-block", full[:len(full)-10], 0, "the zstd stream ends mid-frame"},
		{"frame ended without a trailer", compress(t, string(decompress(t, full))), len(events), "no trailer after line 26: the recording did not finish"},
		{"last line incomplete", compress(t, string(decompress(t, full))+`{"seq":26,"t":1`), len(events), "after line 26, the stream ends inside a line, 15 bytes of which were lost"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got := readAll(t, r)
			if tc.wantEvents > 0 {
				if diff := cmp.Diff(events, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			}
			for i, ev := range got {
				if ev.Seq != uint64(i+1) {
					t.Fatalf("event %d has seq %d", i, ev.Seq)
				}
			}
			if !r.Truncated() || r.Trailer() != nil {
				t.Errorf("Truncated() = %v, Trailer() = %v; want true, nil", r.Truncated(), r.Trailer())
			}
			if !bytes.Contains([]byte(r.TruncatedReason()), []byte(tc.reason)) {
				t.Errorf("TruncatedReason() = %q, want it to contain %q", r.TruncatedReason(), tc.reason)
			}
		})
	}
}

// compress makes one zstd frame of s.
func compress(t testing.TB, s string) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll([]byte(s), nil)
}

// decompress returns the NDJSON of a bundle, as far as it goes.
func decompress(t testing.TB, data []byte) []byte {
	t.Helper()
	dec, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	out, err := io.ReadAll(dec)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	return out
}

// recompress edits the lines of a bundle and compresses them again.
func recompress(t testing.TB, data []byte, edit func(lines [][]byte) [][]byte) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(decompress(t, data), []byte("\n")), []byte("\n"))
	lines = edit(lines)
	return compress(t, string(bytes.Join(lines, []byte("\n")))+"\n")
}

// TestLongLines reads lines longer than the Reader's internal buffer, and
// rejects one over the cap while assembling it.
func TestLongLines(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16) // 200 KiB of text
	bin := bytes.Repeat([]byte{0xff, 0, 1}, 1<<20/3)            // 1 MiB of binary, 1.33 MiB as base64
	events := []Event{
		{Kind: KindWSMessage, Type: TypeText, Body: Text(big)},
		{Kind: KindWSMessage, Type: TypeBinary, Body: Binary(bin)},
		{Kind: KindMark, Name: "after"},
	}
	data := writeBundle(t, events, true)
	r, err := NewReader(bytes.NewReader(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r)
	if len(got) != len(events) {
		t.Fatalf("read %d events, want %d", len(got), len(events))
	}
	for i := range got {
		// cmp.Diff of megabyte slices is slow under -race: compare bodies apart.
		if !bytes.Equal(events[i].Body.Data, got[i].Body.Data) {
			t.Errorf("event %d: the %d-byte payload came back as %d different bytes", i, len(events[i].Body.Data), len(got[i].Body.Data))
		}
		want := events[i]
		want.Body.Data, got[i].Body.Data = nil, nil
		if diff := cmp.Diff(want, got[i]); diff != "" {
			t.Errorf("event %d (-want +got):\n%s", i, diff)
		}
	}

	r, err = NewReader(bytes.NewReader(data), &ReaderOptions{MaxLine: 300 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ev Event
	if err := r.Next(&ev); err != nil {
		t.Fatalf("the 200 KiB line under a 300 KiB cap: %v", err)
	}
	err = r.Next(&ev)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Line != 3 {
		t.Errorf("the 1.33 MiB line under a 300 KiB cap: %v, want a FormatError at line 3", err)
	}
}
