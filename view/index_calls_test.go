package view

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/triage"
)

// callKey is what the index and triage's timeline both say of one RPC call.
type callKey struct {
	Conn, ID, Method string
	Seq              uint64
	Ended            bool
	Outcome          string
}

// TestIndexCallsAreTheSessions holds the index to the replay session's
// decode: its calls (Effect RPC, JSON-RPC, stream-json and the model calls,
// every call the timeline lists) and undecodable
// frames are the ones triage's timeline
// (which takes them from the engine's Tap) lists, for every golden bundle,
// so the view does not decode the RPC traffic a second time, its own way.
func TestIndexCallsAreTheSessions(t *testing.T) {
	paths, err := filepath.Glob("../fixtures/golden/*.zst")
	if err != nil || len(paths) == 0 {
		t.Fatalf("golden bundles: %v %v", paths, err)
	}
	live, _ := filepath.Glob(filepath.Join(goldenLive, "*.zst"))
	paths = append(paths, live...)
	// The real Codex CLI's app-server under the fixture server and under T3.
	paths = append(paths, codexVerifyBundle, "../protocol/testdata/codex-t3-idle.zst", "../protocol/testdata/codex-t3-nested.zst")
	ctx := context.Background()
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			_, ix, err := read(ctx, p, delivery.Registered())
			if err != nil {
				t.Fatal(err)
			}
			tl, err := triage.Load(ctx, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []callKey
			for _, c := range ix.Calls {
				got = append(got, callKey{c.Conn, c.ID, c.Method, c.Seq, c.EndSeq != 0, c.Outcome})
			}
			ws := map[string]bool{}
			for _, w := range ix.WS {
				ws[w.Conn] = true
			}
			for _, c := range tl.Calls {
				want = append(want, callKey{c.Conn, c.ID, c.Method, c.StartSeq, c.Ended, string(c.Outcome)})
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("index calls differ from the timeline's (-timeline +index):\n%s", d)
			}
			var gotE, wantE []uint64
			for _, e := range ix.RPCErrors {
				gotE = append(gotE, e.Seq)
			}
			for _, e := range tl.RPCErrors {
				if !ws[e.Conn] {
					continue
				}
				wantE = append(wantE, e.Seq)
			}
			if d := cmp.Diff(wantE, gotE); d != "" {
				t.Errorf("undecodable frames differ (-timeline +index):\n%s", d)
			}
		})
	}
}
