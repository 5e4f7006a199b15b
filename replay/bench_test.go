package replay_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// projectionHeavy is a run whose every observation carries a large projection.
var projectionHeavy = synth.Options{Scenario: "idle", Polls: 200, Filler: 40, FillerBytes: 1000}

func uncompressedSize(evs []bundle.Event) int64 {
	var n int64
	var line []byte
	for i := range evs {
		line = bundle.AppendEvent(line[:0], &evs[i])
		n += int64(len(line)) + 1
	}
	return n
}

// BenchmarkEngine measures the engine alone, in MB/s of uncompressed bundle.
func BenchmarkEngine(b *testing.B) {
	s := synth.MustBuild(projectionHeavy)
	b.SetBytes(uncompressedSize(s.Events))
	for b.Loop() {
		e := replay.NewEngine(delivery.EngineOptions(nil))
		for i := range s.Events {
			if err := e.Feed(&s.Events[i]); err != nil {
				b.Fatal(err)
			}
		}
		if v := e.Verdict(); v.Status != "passed" {
			b.Fatalf("verdict %+v", v)
		}
	}
}

// BenchmarkReplayFile measures a whole replay from a bundle file: reading,
// decompressing, decoding and checking, in MB/s of uncompressed bundle.
func BenchmarkReplayFile(b *testing.B) {
	evs, err := synth.Recorded(synth.MustBuild(projectionHeavy))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "heavy.zst")
	if err := synth.WriteBundle(path, evs); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(uncompressedSize(evs))
	ctx := context.Background()
	for b.Loop() {
		res, err := replay.ReplayFile(ctx, path, delivery.Options(nil))
		if err != nil || !res.Reproduced {
			b.Fatalf("replay: %v %+v", err, res)
		}
	}
	_ = os.Remove(path)
}

// BenchmarkReplayBundle replays the bundle named by $WIREPROOF_BENCH_BUNDLE
// (bench/replay.sh profiles its large bundle with it), in MB/s of
// uncompressed bundle; skipped when unset.
func BenchmarkReplayBundle(b *testing.B) {
	path := os.Getenv("WIREPROOF_BENCH_BUNDLE")
	if path == "" {
		b.Skip("WIREPROOF_BENCH_BUNDLE names no bundle")
	}
	ctx := context.Background()
	for b.Loop() {
		res, err := replay.ReplayFile(ctx, path, delivery.Options(nil))
		if err != nil || !res.Reproduced {
			b.Fatalf("replay: %v %+v", err, res)
		}
		b.SetBytes(res.Bytes)
	}
}
