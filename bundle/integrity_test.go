package bundle

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// integrityBundle is a closed bundle of several frames, each of several
// flushed blocks (a frame ends at every second flush), with a message over
// several zstd blocks, like a recording with lifecycle events between
// bursts.
func integrityBundle(t testing.TB) ([]byte, []Event) {
	return integrityBundleFramed(t, 2<<10, 140<<10, 2)
}

// integrityBundleOf is integrityBundle with noise random bytes and text
// bytes of compressible text (over 128 KiB: several blocks).
func integrityBundleOf(t testing.TB, noiseLen, textLen int) ([]byte, []Event) {
	return integrityBundleFramed(t, noiseLen, textLen, 2)
}

// integrityBundleFramed is integrityBundleOf with a frame ended at every
// frameFlushes-th flush; 0: by the default FrameInterval, which these
// events (1 µs apart) never reach, so the header's frame and one more.
func integrityBundleFramed(t testing.TB, noiseLen, textLen, frameFlushes int) ([]byte, []Event) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), &WriterOptions{Clock: stepClock(1000), FlushInterval: time.Hour, frameFlushes: frameFlushes})
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	add := func(ev Event) {
		if _, err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
		ev.Detach()
		events = append(events, ev)
	}
	for i, ev := range sampleEvents() {
		add(ev)
		if i%5 == 4 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A message over several blocks, and random-looking bytes that do not
	// compress, so flips land in raw and compressed blocks alike.
	text := bytes.Repeat([]byte(`thread.message hello 0123456789 `), textLen/32)
	add(Event{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeText, Body: Text(text)})
	noise := make([]byte, noiseLen)
	x := uint32(1)
	for i := range noise {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		noise[i] = byte(x)
	}
	add(Event{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeBinary, Body: Binary(noise)})
	add(Event{Kind: KindMark, Name: "phase", Body: Text([]byte(`{"phase":"done"}`))})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes()), events
}

// matrixStep is the stride of a test over every byte of a bundle: step,
// or with -short the sparser short.
func matrixStep(step, short int) int {
	if testing.Short() {
		return short
	}
	return step
}

// readResult reads a whole bundle and says which of the three it is.
type readResult struct {
	events     []Event
	err        error
	atOpen     bool
	truncated  bool
	unverified int
}

func readBytes(data []byte) readResult {
	r, err := NewReader(bytes.NewReader(data), nil)
	if err != nil {
		return readResult{err: err, atOpen: true}
	}
	defer r.Close()
	var res readResult
	for {
		var ev Event
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			res.err = err
			return res
		}
		ev.Detach()
		res.events = append(res.events, ev)
	}
	res.truncated = r.Truncated()
	res.unverified = r.Unverified()
	return res
}

// TestBitFlipMatrix flips bits across the whole of a closed bundle: every
// flip is found as damage (or, in the first bytes, which say what the file
// is, makes it unreadable), never read as verified and never as a clean cut.
func TestBitFlipMatrix(t *testing.T) {
	t.Run("a frame per two flushes", func(t *testing.T) {
		data, _ := integrityBundle(t)
		mustVerify(t, data)
		bitFlipMatrix(t, data, frameHeaderLen(data[4]))
	})
	t.Run("default frames", func(t *testing.T) {
		data, _ := integrityBundleFramed(t, 2<<10, 140<<10, 0)
		if n := bytes.Count(data, skippableMagic); n != 2 {
			t.Fatalf("%d checkpoints, want 2 (the header's frame, then one frame of flushed blocks)", n)
		}
		mustVerify(t, data)
		bitFlipMatrix(t, data, frameHeaderLen(data[4]))
	})
	// The NDJSON compressed again by a zstd tool: one frame, no
	// checkpoints. Intact or flipped, it is not what the writer wrote.
	t.Run("recompressed", func(t *testing.T) {
		data := recompressed(t)
		var de *DamagedError
		if res := readBytes(data); !errors.As(res.err, &de) {
			t.Fatalf("the recompressed bundle: err %v (%T), truncated %v; want a *DamagedError", res.err, res.err, res.truncated)
		}
		// A flip of its first block's length reads as a cut before the
		// header line is whole, which cannot be read at all.
		bitFlipMatrix(t, data, frameHeaderLen(data[4])+3)
	})
}

// recompressed is integrityBundle's NDJSON compressed as one zstd frame of
// several blocks, as `zstd -dc | edit | zstd` leaves it.
func recompressed(t *testing.T) []byte {
	data, _ := integrityBundle(t)
	plain := decompress(t, data)
	if len(plain) <= maxBlockSize {
		t.Fatalf("%d bytes of NDJSON: too few for several zstd blocks", len(plain))
	}
	return compress(t, string(plain))
}

func mustVerify(t *testing.T, data []byte) {
	t.Helper()
	if res := readBytes(data); res.err != nil || res.truncated {
		t.Fatalf("the intact bundle: err %v, truncated %v", res.err, res.truncated)
	}
}

// bitFlipMatrix flips bits across data: every flip must be damage, except
// that one in its first unreadableBelow bytes (the frame header, which
// says what the file is) may make it no bundle at all.
func bitFlipMatrix(t *testing.T, data []byte, unreadableBelow int) {
	var flips, damaged, unreadable int
	step := matrixStep(1, 7)
	for i := 0; i < len(data); i += step {
		bits := []int{i % 8}
		if i < 64 || i >= len(data)-256 {
			bits = []int{0, 1, 2, 3, 4, 5, 6, 7} // every bit of the frame headers and the seal
		}
		for _, bit := range bits {
			b := bytes.Clone(data)
			b[i] ^= 1 << bit
			flips++
			res := readBytes(b)
			var de *DamagedError
			var fe *FormatError
			switch {
			case errors.As(res.err, &de):
				damaged++
			case res.atOpen && i < unreadableBelow && errors.As(res.err, &fe):
				unreadable++ // the magic or the first frame's header: not a bundle at all
			case res.err == nil && res.truncated:
				t.Fatalf("flip of bit %d of byte %d of %d: read as truncated, not damaged (%d events)", bit, i, len(data), len(res.events))
			case res.err == nil:
				t.Fatalf("flip of bit %d of byte %d of %d: read as verified", bit, i, len(data))
			default:
				t.Fatalf("flip of bit %d of byte %d of %d: %v (%T), want a *DamagedError", bit, i, len(data), res.err, res.err)
			}
		}
	}
	t.Logf("%d flips over %d bytes: %d damaged, %d unreadable", flips, len(data), damaged, unreadable)
}

// TestCutAtEveryByte: a closed bundle cut at any byte reads as truncated,
// never as damaged, and what it returns is a prefix of the events; cut
// inside its header it has no header to read. A cut inside a frame reads
// the frame's complete blocks (the writer's flushes) as unverified events,
// so a longer prefix never reads fewer events.
func TestCutAtEveryByte(t *testing.T) {
	data, events := integrityBundle(t)
	if n := bytes.Count(data, skippableMagic); n < 4 {
		t.Fatalf("%d checkpoints: the bundle has too few frames to test", n)
	}
	prev, withUnverified := 0, 0
	headerEnd := bytes.Index(data[4:], skippableMagic) + 4 + checkpointFrame // frame 1 and its checkpoint
	step := matrixStep(1, 7)
	for n := 0; n < len(data); n += step {
		res := readBytes(data[:n])
		var de *DamagedError
		var fe *FormatError
		switch {
		case errors.As(res.err, &de):
			t.Fatalf("cut at %d of %d: %v, want truncated", n, len(data), res.err)
		case n < headerEnd-checkpointFrame && res.atOpen && errors.As(res.err, &fe):
			continue // no header yet
		case res.err != nil:
			t.Fatalf("cut at %d of %d (header ends at %d): %v (%T), want truncated", n, len(data), headerEnd, res.err, res.err)
		case !res.truncated:
			t.Fatalf("cut at %d of %d: not truncated", n, len(data))
		}
		if len(res.events) > len(events) {
			t.Fatalf("cut at %d: %d events, more than the %d written", n, len(res.events), len(events))
		}
		for i := range res.events {
			if res.events[i].Seq != events[i].Seq || !bytes.Equal(res.events[i].Body.Data, events[i].Body.Data) {
				t.Fatalf("cut at %d: event %d differs from the one written", n, i)
			}
		}
		if len(res.events) < prev {
			t.Fatalf("cut at %d: %d events, fewer than the %d of a shorter cut", n, len(res.events), prev)
		}
		if res.unverified > len(res.events) {
			t.Fatalf("cut at %d: %d unverified events of %d", n, res.unverified, len(res.events))
		}
		if res.unverified > 0 {
			withUnverified++
		}
		prev = len(res.events)
	}
	if withUnverified == 0 {
		t.Errorf("no cut read an unfinished frame's blocks")
	}
	// Cut inside the last frame's checksum, or just before the seal, every
	// event is read, the last ones unverified.
	for _, n := range []int{len(data) - checkpointFrame - 1, len(data) - checkpointFrame} {
		res := readBytes(data[:n])
		if res.err != nil || !res.truncated || len(res.events) != len(events) || res.unverified == 0 {
			t.Errorf("cut at %d of %d: err %v, truncated %v, %d of %d events, %d unverified; want all, truncated, some unverified",
				n, len(data), res.err, res.truncated, len(res.events), len(events), res.unverified)
		}
	}
}

// TestCutRecompressed: a recompressed format 2 bundle (one zstd frame)
// cut anywhere is never read as truncated: cut before its first block
// ends it has no header to read; after, its first frame holds more than
// the header, which no prefix of a writer's output does.
func TestCutRecompressed(t *testing.T) {
	data := recompressed(t)
	step := matrixStep(1, 7)
	var damaged, unreadable int
	for n := 0; n < len(data); n += step {
		res := readBytes(data[:n])
		var de *DamagedError
		var fe *FormatError
		switch {
		case errors.As(res.err, &de):
			damaged++
		case res.atOpen && errors.As(res.err, &fe):
			unreadable++
		default:
			t.Fatalf("cut at %d of %d: err %v (%T), truncated %v, %d events; want damaged, or no header", n, len(data), res.err, res.err, res.truncated, len(res.events))
		}
	}
	if damaged == 0 {
		t.Errorf("no cut of the recompressed bundle read as damaged (%d without a header)", unreadable)
	}
	t.Logf("%d cuts damaged, %d without a header", damaged, unreadable)
}

// TestLegacyBitFlips: a bit flipped in a format 1 bundle, one zstd frame
// read as a stream, is damage, even when the first thing it breaks is a
// line: the rest of the frame is decoded and its checksum fails. Only the
// first bytes (the frame header) make it no bundle. Format 1's known limits remain (counted,
// not failed): a changed block length reads as a cut, and a bit zstd does
// not use changes nothing it decodes.
func TestLegacyBitFlips(t *testing.T) {
	golden, err := os.ReadFile("../fixtures/golden/live/active.zst")
	if err != nil {
		t.Fatal(err)
	}
	big, _ := integrityBundle(t)
	for name, data := range map[string][]byte{
		"golden live/active": golden,
		"several blocks":     legacy(t, big),
	} {
		t.Run(name, func(t *testing.T) {
			mustVerify(t, data)
			step := matrixStep(7, 31) // 7: a different bit at each byte
			var damaged, cut, same int
			for i := 0; i < len(data); i += step {
				bit := i % 8
				b := bytes.Clone(data)
				b[i] ^= 1 << bit
				res := readBytes(b)
				var de *DamagedError
				var fe *FormatError
				switch {
				case errors.As(res.err, &de):
					damaged++
				case res.atOpen && i < frameHeaderLen(data[4]) && errors.As(res.err, &fe):
				case res.err == nil && res.truncated:
					cut++
				case res.err == nil:
					same++
				default:
					t.Errorf("flip of bit %d of byte %d of %d: %v (%T), want a *DamagedError", bit, i, len(data), res.err, res.err)
				}
			}
			if damaged < (len(data)/step)*9/10 {
				t.Errorf("%d of %d flips damaged, want nearly all", damaged, len(data)/step)
			}
			t.Logf("%d flips: %d damaged, %d read as a cut, %d changed nothing decoded", len(data)/step, damaged, cut, same)
		})
	}
}

// TestGarbageAfterTheSeal: anything after a closed bundle's seal is damage.
func TestGarbageAfterTheSeal(t *testing.T) {
	data, _ := integrityBundle(t)
	for name, tail := range map[string][]byte{
		"a zero":           {0},
		"text":             []byte("hello\n"),
		"a zstd frame":     compress(t, `{"seq":99,"t":1,"kind":"mark"}`+"\n"),
		"the bundle again": data,
		"a checkpoint":     data[len(data)-checkpointFrame:],
	} {
		t.Run(name, func(t *testing.T) {
			res := readBytes(append(bytes.Clone(data), tail...))
			var de *DamagedError
			if !errors.As(res.err, &de) {
				t.Fatalf("err %v (%T), truncated %v; want a *DamagedError", res.err, res.err, res.truncated)
			}
		})
	}
}

// TestLegacyGarbageAfterTrailer: a format 1 bundle followed by anything is
// damaged too; read alone it verifies.
func TestLegacyGarbageAfterTrailer(t *testing.T) {
	old := legacy(t, writeBundle(t, sampleEvents(), true))
	if res := readBytes(old); res.err != nil || res.truncated {
		t.Fatalf("format 1 bundle: err %v, truncated %v", res.err, res.truncated)
	}
	res := readBytes(append(bytes.Clone(old), "garbage"...))
	var de *DamagedError
	if !errors.As(res.err, &de) {
		t.Fatalf("format 1 bundle with garbage after it: err %v (%T), truncated %v; want a *DamagedError", res.err, res.err, res.truncated)
	}
}

// TestLinesAcrossFrames: messages larger than a frame (the Writer ends one
// every frameMax bytes) come back byte-exact, a huge JSON payload (written
// without a copy) and a huge text one alike; cut in the middle, the bundle
// is truncated with the events before them.
func TestLinesAcrossFrames(t *testing.T) {
	jsonBody := append(append([]byte(`{"items":[`), bytes.Repeat([]byte(`"abcdefghij",`), (frameMax+frameMax/2)/13)...), `"z"]}`...)
	text := bytes.Repeat([]byte("text that is long "), 2*frameMax/18+7)
	events := []Event{
		{Kind: KindMark, Name: "phase", Body: Text([]byte(`{"phase":"running"}`))},
		{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeText, Body: Text(jsonBody)},
		{Kind: KindWSMessage, Conn: "ws1", Dir: DirServerToClient, Type: TypeText, Body: Text(text)},
		{Kind: KindMark, Name: "phase", Body: Text([]byte(`{"phase":"done"}`))},
	}
	data := writeBundle(t, events, true)
	res := readBytes(data)
	if res.err != nil || res.truncated || len(res.events) != len(events) {
		t.Fatalf("err %v, truncated %v, %d events; want %d verified", res.err, res.truncated, len(res.events), len(events))
	}
	for i := range events {
		if !bytes.Equal(res.events[i].Body.Data, events[i].Body.Data) {
			t.Errorf("event %d: %d bytes back for %d written", i, len(res.events[i].Body.Data), len(events[i].Body.Data))
		}
	}
	if n := bytes.Count(data, skippableMagic); n < 4 {
		t.Errorf("%d checkpoints: the big messages did not span frames", n)
	}
	cut := readBytes(data[:len(data)/2])
	if cut.err != nil || !cut.truncated || len(cut.events) < 1 || len(cut.events) > 2 {
		t.Errorf("cut in half: err %v, truncated %v, %d events", cut.err, cut.truncated, len(cut.events))
	}
}
