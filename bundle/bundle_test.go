package bundle

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	return writeBundleWith(t, events, closeIt, &WriterOptions{})
}

// writeBundleWith is writeBundle with o's frame options (its Clock and
// FlushInterval are set as writeBundle's).
func writeBundleWith(t testing.TB, events []Event, closeIt bool, o *WriterOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts := *o
	opts.Clock, opts.FlushInterval = stepClock(1000), time.Hour
	w, err := NewWriter(&buf, testHeader(), &opts)
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

// recompress edits the lines of a bundle and stores them again as format 2
// does: the header in a frame of its own, the rest in a second, each
// followed by its checkpoint, the last one the seal.
func recompress(t testing.TB, data []byte, edit func(lines [][]byte) [][]byte) []byte {
	t.Helper()
	lines := bytes.Split(bytes.TrimSuffix(decompress(t, data), []byte("\n")), []byte("\n"))
	return framed(t, edit(lines), true)
}

// framed stores lines as format 2 does: the first line in a frame of its
// own, the rest in another, each frame followed by its checkpoint; with seal
// the last checkpoint is the seal.
func framed(t testing.TB, lines [][]byte, seal bool) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var out []byte
	var content uint64
	for i, part := range [][][]byte{lines[:1], lines[1:]} {
		if len(part) == 0 {
			continue
		}
		plain := append(bytes.Join(part, []byte("\n")), '\n')
		out = enc.EncodeAll(plain, out)
		content += uint64(len(plain))
		c := checkpointInfo{offset: uint64(len(out)), content: content, final: seal && i == 1, digest: sha256.Sum256(out)}
		out = appendCheckpoint(out, c)
	}
	return out
}

// formatOne is a bundle's NDJSON with its header saying format 1.
func formatOne(plain []byte) string {
	return string(bytes.Replace(plain, []byte(`"format":2`), []byte(`"format":1`), 1))
}

// legacy turns a bundle's lines into what format 1 wrote: the header says
// format 1, the trailer carries the SHA-256 of the lines before it, and the
// whole is one zstd frame without checkpoints.
func legacy(t testing.TB, data []byte) []byte {
	t.Helper()
	plain := []byte(formatOne(decompress(t, data)))
	i := bytes.LastIndex(plain[:len(plain)-1], []byte("\n")) + 1
	sum := sha256.Sum256(plain[:i])
	trailer := bytes.Replace(plain[i:], []byte(`}}`), []byte(fmt.Sprintf(`,"digest":"sha256:%x"}}`, sum)), 1)
	return compress(t, string(plain[:i])+string(trailer))
}
