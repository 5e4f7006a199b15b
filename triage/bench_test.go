package triage_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay/synth"
	"github.com/wireproof/wireproof/triage"
)

// BenchmarkLoad measures triage.Load (what inspect, report, diff and view
// run) on a generated projection-heavy bundle, in MB/s of uncompressed
// bundle: reading, decompressing, building the timeline and replaying the
// checks.
func BenchmarkLoad(b *testing.B) {
	evs, err := synth.Recorded(synth.MustBuild(synth.Options{Scenario: "idle", Polls: 200, Filler: 40, FillerBytes: 1000}))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "heavy.zst")
	if err := synth.WriteBundle(path, evs); err != nil {
		b.Fatal(err)
	}
	var size int64
	var line []byte
	for i := range evs {
		line = bundle.AppendEvent(line[:0], &evs[i])
		size += int64(len(line)) + 1
	}
	b.SetBytes(size)
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		tl, err := triage.Load(ctx, path, nil)
		if err != nil || !tl.Replayed.Reproduced || len(tl.Calls) == 0 {
			b.Fatalf("load: %v", err)
		}
	}
}
