package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

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
		{"newer format", newer, nil, "x.zst is format 3; this wireproof reads format 2 or older: upgrade wireproof", true},
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
		{"format 1 trailer digest", func() []byte {
			old := decompress(t, legacy(t, good))
			return compress(t, string(bytes.Replace(old, []byte("GET"), []byte("PUT"), 1)))
		}(), nil, "x.zst is damaged: line 5: the trailer digest", false},
		{"trailer count", recompress(t, good, func(lines [][]byte) [][]byte {
			lines[4] = bytes.Replace(lines[4], []byte(`"events":4`), []byte(`"events":5`), 1)
			return lines
		}), nil, "x.zst is damaged: line 5: the trailer counts 5 lines before it, the bundle has 4", false},
		{"data after the trailer", recompress(t, good, func(lines [][]byte) [][]byte { return append(lines, lines[1]) }), nil,
			"x.zst is damaged: line 6: data after the trailer", false},
		{"no seal after the trailer", framed(t, bytes.Split(bytes.TrimSuffix(decompress(t, good), []byte("\n")), []byte("\n")), false), nil,
			"x.zst is damaged: the checkpoint after the trailer is not the seal", false},
		// Format 2's first frame ends with the header line: the NDJSON
		// compressed again as one frame (a tool's edit) is not a cut.
		{"format 2 recompressed", compress(t, string(decompress(t, good))), nil,
			"x.zst is damaged: at stored byte 0, the first frame holds 4 lines (" + strconv.Itoa(len(decompress(t, good))-len(headerLine(t, good))) +
				" bytes) after the header: not as a wireproof writer writes it, which ends the first frame after the header line (recompressed?)", true},
		{"format 2 recompressed, cut", compress(t, string(decompress(t, good)[:len(headerLine(t, good))+40])), nil,
			"x.zst is damaged: at stored byte 0, the first frame holds 0 lines (40 bytes) after the header", true},
		// A format 1 line that is not an event blames the writer only when
		// its frame checks.
		{"format 1 bad line", badLegacy(t, good), nil,
			"x.zst: line 2: not a valid bundle line: kind is not a string at byte 25", false},
		{"format 1 bad line, frame cut", func() []byte {
			big, _ := integrityBundle(t) // over several zstd blocks, the first of which decodes before the cut
			b := badLegacy(t, big)
			return b[:len(b)-4] // without its checksum
		}(), nil, "x.zst is damaged: at stored byte 0, line 2: not a valid bundle line: kind is not a string at byte 25; it comes from zstd blocks that no checksum vouches for " +
			"(the file ends inside their frame), and a cut leaves complete lines as the writer wrote them: the stored bytes were changed", false},
		{"format 1 bit flip under a bad line", flipBit(t, "../fixtures/golden/live/active.zst", 99, 0), nil,
			"x.zst is damaged: at stored byte 0, the zstd frame's content checksum does not match its content; " +
				"the first bad line it produced: line 41: not a valid bundle line: json payload is not a JSON value at byte 90", false},
		{"format 2 bad line in an unfinished frame", func() []byte {
			lines := bytes.Split(bytes.TrimSuffix(decompress(t, good), []byte("\n")), []byte("\n"))
			lines[1] = bytes.Replace(lines[1], []byte(`"kind":"http.request"`), []byte(`"kind":http.request"`), 1)
			b := framed(t, lines, true)
			return b[:len(b)-checkpointFrame-4] // the last frame without its checksum and seal
		}(), nil, "x.zst is damaged: at stored byte 316, line 2: not a valid bundle line: kind is not a string at byte 25; it comes from zstd blocks that no checksum vouches for " +
			"(the file ends inside their frame), and a cut leaves complete lines as the writer wrote them: the stored bytes were changed", false},
		{"bytes after the seal", append(bytes.Clone(good), 0), nil,
			"x.zst is damaged: at stored byte", false},
		{"a frame after the seal", append(bytes.Clone(good), good...), nil,
			"data after the seal", false},
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
			var de *DamagedError
			if damaged := strings.Contains(tc.want, "damaged") || strings.Contains(tc.want, "seal"); damaged && !errors.As(err, &de) {
				t.Fatalf("error = %v (%T), want a *DamagedError", err, err)
			} else if !damaged && !errors.As(err, &fe) {
				t.Fatalf("error = %v (%T), want a *FormatError", err, err)
			}
			if got := err.Error(); got != tc.want && !bytes.Contains([]byte(got), []byte(tc.want)) {
				t.Errorf("error = %q, want %q", got, tc.want)
			}
		})
	}
}

// headerLine is a bundle's first line, with its newline.
func headerLine(t testing.TB, data []byte) []byte {
	plain := decompress(t, data)
	return plain[:bytes.IndexByte(plain, '\n')+1]
}

// badLegacy is data as format 1 wrote it with its first event's kind
// broken: one zstd frame whose checksum matches its bad line.
func badLegacy(t testing.TB, data []byte) []byte {
	plain := decompress(t, legacy(t, data))
	return compress(t, string(bytes.Replace(plain, []byte(`"kind":"http.request"`), []byte(`"kind":http.request"`), 1)))
}

// flipBit is the file at path with bit bit of byte off flipped.
func flipBit(t testing.TB, path string, off, bit int) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 1 << bit
	return b
}

func TestTruncated(t *testing.T) {
	events := sampleEvents()
	// Flushed, never closed: the frame after the header's is not ended
	// (a flush ends a block), so its events are read from its complete
	// blocks, after the last checkpoint.
	full := writeBundle(t, events, false)
	// Flushed with a frame end at every flush (as format 2 first did), never
	// closed: a checkpoint after the events, no trailer.
	ended := writeBundleWith(t, events, false, &WriterOptions{frameFlushes: 1})
	tests := []struct {
		name       string
		data       []byte
		wantEvents int
		unverified int // -1: every event read
		reason     string
	}{
		{"never closed", full, len(events), len(events), "the file ends inside a zstd frame that starts at stored byte"},
		{"never closed, frames ended", ended, len(events), 0, "no trailer after line 26: the recording did not finish"},
		{"cut in the last checkpoint", ended[:len(ended)-10], len(events), 1, "the file ends inside a checkpoint that starts at stored byte"},
		{"cut in the last checksum", ended[:len(ended)-checkpointFrame-3], len(events), 1, "the file ends inside a zstd frame that starts at stored byte"},
		{"cut in the last block", full[:len(full)-3], 0, -1, "the file ends inside a zstd frame that starts at stored byte"},
		// Format 1 is one frame; in format 2 one frame of it all is damage
		// (TestReaderErrors).
		{"format 1, frame ended without a trailer", compress(t, formatOne(decompress(t, full))), len(events), 0, "no trailer after line 26: the recording did not finish"},
		{"format 1, last line incomplete", compress(t, formatOne(decompress(t, full))+`{"seq":26,"t":1`), len(events), 0, "after line 26, the stream ends inside a line, 15 bytes of which were lost"},
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
			if tc.unverified < 0 {
				tc.unverified = len(got) // every event read is after the header's checkpoint
			}
			if r.Unverified() != tc.unverified {
				t.Errorf("Unverified() = %d, want %d", r.Unverified(), tc.unverified)
			}
			if n := fmt.Sprintf("the last %d events came after the last checkpoint", tc.unverified); tc.unverified > 0 && !strings.Contains(r.TruncatedReason(), n) {
				t.Errorf("TruncatedReason() = %q, want it to say %q", r.TruncatedReason(), n)
			}
		})
	}
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

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.zst")
	w, err := Create(path, Header{Format: FormatVersion, Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := w.Append(&Event{Kind: KindMark, Name: name, Body: Text([]byte(`{"n":1}`))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range c.Events {
		got = append(got, fmt.Sprintf("%d %s %s %s", ev.Seq, ev.Kind, ev.Name, ev.Body.Data))
	}
	want := []string{`1 mark a {"n":1}`, `2 mark b {"n":1}`, `3 mark c {"n":1}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if c.Header.Tool != "test" || c.Trailer == nil || c.Trailer.Events != 4 || c.Truncated {
		t.Errorf("header %+v trailer %+v truncated %v", c.Header, c.Trailer, c.Truncated)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.zst"), nil); err == nil {
		t.Error("ReadFile of a missing file succeeded")
	}
}

// TestTruncatedAfterTrailer: a bundle cut after its trailer, before or
// inside its seal, has its trailer checked but not its digest, and the
// reason counts the events no checkpoint vouches for, saying what checked
// them (the last frame's checksum, or nothing when that was cut too).
func TestTruncatedAfterTrailer(t *testing.T) {
	good := writeBundle(t, sampleEvents()[:3], true)
	type result struct {
		Reason     string
		Unverified int
		Trailer    bool
		Digest     string
	}
	tests := []struct {
		name string
		data []byte
		want result
	}{
		{"before the seal", good[:len(good)-checkpointFrame], result{
			"the file ends after the trailer, before the seal (the checkpoint that ends a closed bundle); " +
				"the last 3 events came after the last checkpoint, from a whole zstd frame whose checksum checked but whose checkpoint was cut off",
			3, true, ""}},
		{"inside the seal", good[:len(good)-10], result{
			"after the trailer, the file ends inside a checkpoint that starts at stored byte " + strconv.Itoa(len(good)-checkpointFrame) +
				" (the recorder stopped mid-write: the frame before it is read whole); " +
				"the last 3 events came after the last checkpoint, from a whole zstd frame whose checksum checked but whose checkpoint was cut off",
			3, true, ""}},
		{"inside the last checksum", good[:len(good)-checkpointFrame-2], result{
			"after the trailer, the file ends inside a zstd frame that starts at stored byte 316 " +
				"(the recorder stopped mid-write: the complete zstd blocks of that frame are read, the rest is lost); " +
				"the last 3 events came after the last checkpoint, from zstd blocks no checksum or checkpoint vouches for",
			3, true, ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if got := readAll(t, r); len(got) != 3 {
				t.Fatalf("%d events, want 3", len(got))
			}
			if !r.Truncated() {
				t.Fatal("not truncated")
			}
			got := result{r.TruncatedReason(), r.Unverified(), r.Trailer() != nil, r.Digest()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
