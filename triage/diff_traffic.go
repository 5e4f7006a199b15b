package triage

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

// traffic is what one pass over a bundle's events tells the diff besides the
// story: counts per event kind and per RPC method, and the run's secret (from
// the run mark), which the story needs to recognize results.
type traffic struct {
	kinds   map[string]int
	methods map[string]int // RPC requests per method
	secret  string
}

// readTraffic reads the bundle at path once. Only WebSocket messages and marks
// are decoded; other payloads are skipped.
func readTraffic(ctx context.Context, path string) (*traffic, error) {
	r, err := bundle.Open(path, &bundle.ReaderOptions{SkipBody: func(k bundle.Kind) bool {
		return k != bundle.KindWSMessage && k != bundle.KindMark
	}})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	tr := &traffic{kinds: map[string]int{string(bundle.KindHeader): 1}, methods: map[string]int{}}
	corr := replay.NewCorrelator(func(ev *replay.RPCEvent) {
		if m := ev.Message; m != nil && m.Tag == t3.TagRequest && ev.Call != nil {
			tr.methods[ev.Call.Method]++
		}
	})
	var ev bundle.Event
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		tr.kinds[string(ev.Kind)]++
		switch ev.Kind {
		case bundle.KindWSOpen, bundle.KindWSMessage, bundle.KindWSClose:
			corr.Feed(&ev)
		case bundle.KindMark:
			if ev.Name == replay.MarkRun && tr.secret == "" {
				// A run mark that does not decode leaves the secret unknown:
				// replay reports it as a decode error, the story goes on.
				var info replay.RunInfo
				if json.Unmarshal(ev.Body.Data, &info) == nil {
					tr.secret = info.Secret
				}
			}
		}
	}
	return tr, nil
}
