package triage

import (
	"encoding/json"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
)

// FirstBad is the first bad state of a failing run: the earliest
// observation of the parent thread from which the failing check's value was
// already the wrong one it failed with, through every observation up to the
// one that decided it.
// The check fired where the run completed; the state it judged went wrong
// here (a duplicate notification appears long before the run ends).
type FirstBad struct {
	Seq    uint64 `json:"seq"`
	T      int64  `json:"t"`
	Source string `json:"source"` // the exchange that carried the observation
	Check  string `json:"check"`
	// Decided is the seq the check fired at, for the link beside it.
	Decided uint64 `json:"decided"`
}

// FirstBadTracker finds the first bad state in one pass: it runs the
// checks of the completing observation (assert.BackgroundDelivery's Main
// and Closing lists, the checks that judge the thread's final state) on
// every parent observation, with the run's suite and the gate's facts
// taken as established, and keeps where each check's current wrong value
// (what it saw, the same since) began: the value it fails with at the end,
// not a value that is only not yet right (no notification before one came). Feed it the run mark (Mark) and the observations
// (Observe) in seq order, then ask Result.
type FirstBadTracker struct {
	suite  assert.Suite
	since  map[string]badSince // check id -> where its current wrong value began
	checks assert.Checks[assert.Completing]
}

// badSince is where a check's current run of failures with one value began.
type badSince struct {
	obs  delivery.Observation
	seen string // what the check saw wrong, the same since obs
}

// NewFirstBadTracker returns a tracker at the start of a bundle.
func NewFirstBadTracker() *FirstBadTracker {
	bd := assert.BackgroundDelivery
	checks := append(append(assert.Checks[assert.Completing]{}, bd.Main...), bd.Closing...)
	return &FirstBadTracker{since: map[string]badSince{}, checks: checks}
}

// Mark takes the run's scenario and secret from its run mark.
func (ft *FirstBadTracker) Mark(ev *bundle.Event) {
	if ev.Kind != bundle.KindMark || ev.Name != replay.MarkRun {
		return
	}
	var info replay.RunInfo
	if json.Unmarshal(ev.Body.Data, &info) == nil {
		ft.suite = assert.Suite{Scenario: info.Scenario, Secret: info.Secret}
	}
}

// Observe runs the checks on one observation (delivery.Observed's hook).
func (ft *FirstBadTracker) Observe(o delivery.Observation) {
	if !o.Parent || o.Projection == nil {
		return
	}
	c := assert.Completing{Suite: ft.suite, Projection: o.Projection, Facts: assert.Facts{Released: true, ParentGateRequested: true}}
	for i := range ft.checks {
		id := ft.checks[i].ID
		f := ft.checks[i].Test(c)
		if f == nil {
			delete(ft.since, id)
			continue
		}
		if b, failing := ft.since[id]; !failing || b.seen != f.Seen+"\x00"+f.Diff {
			o.Projection = nil // valid only during the call
			ft.since[id] = badSince{obs: o, seen: f.Seen + "\x00" + f.Diff}
		}
	}
}

// Result is the first bad state of res's failing check, nil when the run
// passed, its check is not one of the completing observation's, or its
// value was right until the observation that decided it.
func (ft *FirstBadTracker) Result(res *replay.Result) *FirstBad {
	if res == nil || res.Verdict.Failure == nil {
		return nil
	}
	f := res.Verdict.Failure
	b, ok := ft.since[f.Check]
	o := b.obs
	if !ok || o.Seq >= f.Seq || b.seen != f.Seen+"\x00"+f.Diff {
		return nil
	}
	return &FirstBad{Seq: o.Seq, T: o.T, Source: string(o.Source), Check: f.Check, Decided: f.Seq}
}
