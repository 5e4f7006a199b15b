package view

import (
	"context"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/triage"
)

// read reads the bundle at path once: every event goes to the index and to
// a replay.Session, the code path of `wireproof replay`, whose engine hands
// over the parent thread's observations as the checks see them and, by its
// Tap, the RPC calls its Correlator rebuilds, so the index's calls come from
// the same decode as the verdict. Payloads are
// decoded only for the kinds the index summarizes or replay reads.
func read(ctx context.Context, path string, spec delivery.Spec) (*Analysis, *Index, error) {
	r, err := bundle.Open(path, &bundle.ReaderOptions{SkipBody: func(k bundle.Kind) bool {
		return !bodyKinds(k) && k != bundle.KindVerdict
	}})
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	a := &Analysis{}
	x := newIndexer(r.Header())
	fb := triage.NewFirstBadTracker()
	observe := func(o delivery.Observation) { a.observe(o); fb.Observe(o) }
	sess, err := replay.NewSession(r.Header(), len(r.Line()), &replay.Options{Engine: &replay.EngineOptions{
		Scenarios: []replay.Scenario{spec.Observed(observe)},
		Tap:       &replay.Tap{RPC: x.onRPC, Protocol: x.onProtocol},
	}})
	if err != nil {
		return nil, nil, err
	}
	var last bundle.Event
	var feedErr error
	err = each(ctx, r, func(ev *bundle.Event) bool {
		x.add(ev, "")
		fb.Mark(ev)
		if feedErr = sess.Feed(ev, len(r.Line())); feedErr != nil {
			return false
		}
		last = bundle.Event{Seq: ev.Seq, T: ev.T, Kind: ev.Kind}
		return true
	})
	if err == nil {
		err = feedErr
	}
	if err != nil {
		return nil, nil, err
	}
	x.read()
	a.Result = sess.Result(r.Truncated(), r.TruncatedReason())
	ix := x.finish(&last, r)
	x.finishFlags(a.Result)
	a.FirstBad = fb.Result(a.Result)
	a.Result.Path = path
	return a, ix, nil
}
