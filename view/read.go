package view

import (
	"context"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay"
)

// read reads the bundle at path once: every event goes to the index and to
// a replay.Session, the code path of `wireproof replay`, whose engine hands
// over the parent thread's observations as the checks see them. Payloads are
// decoded only for the kinds the index summarizes or replay reads.
func read(ctx context.Context, path string) (*Analysis, *Index, error) {
	r, err := bundle.Open(path, &bundle.ReaderOptions{SkipBody: func(k bundle.Kind) bool {
		return !bodyKinds(k) && k != bundle.KindVerdict
	}})
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	a := &Analysis{}
	sess, err := replay.NewSession(r.Header(), len(r.Line()), &replay.Options{Engine: &replay.EngineOptions{OnObservation: a.observe}})
	if err != nil {
		return nil, nil, err
	}
	x := newIndexer(r.Header())
	var last bundle.Event
	var feedErr error
	err = each(ctx, r, func(ev *bundle.Event) bool {
		x.add(ev, "")
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
	ix := x.finish(&last, r)
	a.Result = sess.Result(r.Truncated(), r.TruncatedReason())
	a.Result.Path = path
	return a, ix, nil
}
