package triage

import (
	"encoding/json"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/replay"
)

// traffic is what one pass over a bundle's events tells the diff besides the
// story: counts per event kind and per RPC method, and the run's secret (from
// the run mark), which the story needs to recognize results.
type traffic struct {
	kinds   map[string]int
	methods map[string]int // RPC requests per method
	secret  string
}

func newTraffic() *traffic {
	return &traffic{kinds: map[string]int{}, methods: map[string]int{}}
}

// event counts one bundle event and takes the secret from the run mark.
func (tr *traffic) event(ev *bundle.Event) {
	tr.kinds[string(ev.Kind)]++
	if ev.Kind == bundle.KindMark && ev.Name == replay.MarkRun && tr.secret == "" {
		// A run mark that does not decode leaves the secret unknown: replay
		// reports it as a decode error, the story goes on.
		var info replay.RunInfo
		if json.Unmarshal(ev.Body.Data, &info) == nil {
			tr.secret = info.Secret
		}
	}
}

// protocolEvent counts the RPC requests per method (Effect RPC, as the
// diff always has).
func (tr *traffic) protocolEvent(ev *protocol.Event) {
	if ev.Kind == protocol.KindRequest && ev.Protocol == protocol.EffectRPC && ev.Call != nil {
		tr.methods[ev.Method]++
	}
}
