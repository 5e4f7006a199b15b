package bundle

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

// seedBundles are the small bundles committed in testdata/ as fuzz seeds and
// as format fixtures: if a change to the writer makes them unreadable, the
// format changed.
var seedBundles = []struct {
	file      string
	events    int
	truncated bool
	make      func(t testing.TB) []byte
}{
	{"valid.zst", 25, false, func(t testing.TB) []byte { return writeBundle(t, sampleEvents(), true) }},
	{"empty.zst", 0, false, func(t testing.TB) []byte { return writeBundle(t, nil, true) }},
	{"unclosed.zst", 25, true, func(t testing.TB) []byte { return writeBundle(t, sampleEvents(), false) }},
	{"truncated.zst", 24, true, func(t testing.TB) []byte {
		b := writeBundle(t, sampleEvents(), false)
		return b[:len(b)-40]
	}},
}

func TestSeedBundles(t *testing.T) {
	for _, s := range seedBundles {
		t.Run(s.file, func(t *testing.T) {
			path := filepath.Join("testdata", s.file)
			if testkit.Update() {
				if err := os.WriteFile(path, s.make(t), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got := readAll(t, r)
			if len(got) != s.events || r.Truncated() != s.truncated {
				t.Errorf("read %d events, truncated %v (%s); want %d, %v",
					len(got), r.Truncated(), r.TruncatedReason(), s.events, s.truncated)
			}
		})
	}
}

// FuzzReader feeds arbitrary bytes to the Reader, starting from the seed
// bundles. It must never panic, and memory stays bounded by the caps.
func FuzzReader(f *testing.F) {
	for _, s := range seedBundles {
		data, err := os.ReadFile(filepath.Join("testdata", s.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Format 2: closed, cut inside its last frame, a bit flipped.
	closed, _ := integrityBundleOf(f, 64, 1<<10)
	f.Add(closed)
	f.Add(closed[:len(closed)-checkpointFrame-5])
	flipped := bytes.Clone(closed)
	flipped[len(flipped)/2] ^= 4
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), &ReaderOptions{MaxLine: 1 << 20, MaxDecoderMemory: 1 << 20})
		if err != nil {
			return
		}
		defer r.Close()
		var ev Event
		for n := uint64(1); n < 1e6; n++ {
			err := r.Next(&ev)
			if err != nil {
				if err == io.EOF && !r.Truncated() && r.Trailer() == nil {
					t.Fatal("a clean end without a trailer is not reported as truncated")
				}
				var de *DamagedError
				if errors.As(err, &de) && r.Truncated() {
					t.Fatal("a bundle both damaged and truncated")
				}
				return
			}
			if ev.Seq != n {
				t.Fatalf("event %d has seq %d", n, ev.Seq)
			}
		}
	})
}
