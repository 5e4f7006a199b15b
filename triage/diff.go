package triage

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/internal/scrub"
	"github.com/wireproof/wireproof/replay"
)

// DiffOptions tune Diff. A nil *DiffOptions means the defaults.
type DiffOptions struct {
	// Context is the number of story steps shown before the divergence on
	// each side; 0 means DefaultDiffContext.
	Context int
	// Delivery is the background-delivery scenario both runs are judged
	// by; nil: delivery.Registered(), what verify records with.
	Delivery *delivery.Spec
}

// DefaultDiffContext is the number of steps of context before a divergence.
const DefaultDiffContext = 3

// DiffResult compares two runs: A (typically a passing run) and B. Everything
// in it is derived from the two bundles alone, so the same bundles always give
// the same result.
type DiffResult struct {
	A DiffSide `json:"a"`
	B DiffSide `json:"b"`
	// Header lists the manifest fields that differ, in a fixed order.
	Header []FieldDiff `json:"header"`
	// VerdictDiff is the diff (-A +B) of the replayed verdicts as JSON, with
	// ids, seqs and times blanked (they differ between any two runs); empty
	// when go-cmp finds them equal. See diff_lines.go for why the text is ours.
	VerdictDiff string `json:"verdictDiff,omitempty"`
	// Divergence is where the parent thread's stories part for good: the
	// first stretch of differing steps after which they never meet again.
	// nil when they end in the same state.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Transient are the stretches where the stories differ and then meet
	// again: one side observed a state the other passed through unseen, which
	// is how snapshot and poll timing differ between good runs. They do not
	// make the runs differ.
	Transient []StoryHunk `json:"transient"`
	Traffic   Traffic     `json:"traffic"`
	// Suites is every suite that ran on either side, with its status and
	// failing check on each.
	Suites []SuiteDiff `json:"suites"`
	// Same: the runs tell the same story (the same verdict status, every
	// suite with the same status and failing check, no divergence).
	Same bool `json:"same"`
	// Context is the number of steps of context the text shows.
	Context int `json:"-"`
}

// DiffSide is what one run tells.
type DiffSide struct {
	Path     string          `json:"path"`
	Tool     string          `json:"tool"`
	Manifest bundle.Manifest `json:"manifest"`
	// Verdict is replayed from the events (the recorded one can be missing).
	Verdict   assert.Verdict `json:"verdict"`
	Truncated bool           `json:"truncated,omitempty"`
	Events    uint64         `json:"events"`
	// Story is the parent thread's story, consecutive equal states collapsed.
	Story []StoryStep `json:"story"`
}

// FieldDiff is one header field that differs.
type FieldDiff struct {
	Field string `json:"field"`
	A     string `json:"a"`
	B     string `json:"b"`
}

// StoryHunk is a stretch of steps where the stories differ: A's steps
// [AIndex, AEnd) against B's [BIndex, BEnd). One side may have none.
type StoryHunk struct {
	AIndex int `json:"aIndex"`
	AEnd   int `json:"aEnd"`
	BIndex int `json:"bIndex"`
	BEnd   int `json:"bEnd"`
	// ASeq and BSeq are the events to look at on each side (wireproof
	// inspect X --around SEQ): the first differing step's first observation,
	// or for a side without steps here the last observation before.
	ASeq uint64 `json:"aSeq"`
	BSeq uint64 `json:"bSeq"`
}

// Divergence is where the two stories part for good.
type Divergence struct {
	StoryHunk
	// Diff is the diff (-A +B) of the state each side is in at the
	// divergence (its first differing step, or for a side without one the
	// state it stayed in), one fact per line; see diff_lines.go.
	Diff string `json:"diff"`
}

// Traffic compares counts per event kind and per RPC method.
type Traffic struct {
	Kinds   []CountRow `json:"kinds"`
	Methods []CountRow `json:"methods"`
}

// CountRow is one count on each side.
type CountRow struct {
	Name string `json:"name"`
	A    int    `json:"a"`
	B    int    `json:"b"`
}

// BundleError is a bundle that could not be read: missing, not a bundle, or
// broken before its end. A truncated tail (a killed recorder) is not an
// error; DiffSide.Truncated says so.
type BundleError struct {
	Path string
	Err  error
}

// Error is the reading error, which names the file (the bundle package's
// errors all do).
func (e *BundleError) Error() string { return e.Err.Error() }
func (e *BundleError) Unwrap() error { return e.Err }

// Diff compares the runs recorded in the bundles at a and b: their headers,
// their replayed verdicts, the parent thread's story step by step and their
// traffic. An error is a *BundleError for a bundle that cannot be read, or
// ctx's error.
func Diff(ctx context.Context, a, b string, opts *DiffOptions) (*DiffResult, error) {
	res := &DiffResult{Context: DefaultDiffContext}
	if opts != nil && opts.Context > 0 {
		res.Context = opts.Context
	}
	var spec *delivery.Spec
	if opts != nil {
		spec = opts.Delivery
	}
	tra, err := readSide(ctx, a, &res.A, spec)
	if err != nil {
		return nil, err
	}
	trb, err := readSide(ctx, b, &res.B, spec)
	if err != nil {
		return nil, err
	}
	res.Header = headerDiff(&res.A, &res.B)
	res.VerdictDiff = jsonDiff(blankVerdict(res.A.Verdict, tra.secret), blankVerdict(res.B.Verdict, trb.secret))
	res.Traffic = Traffic{Kinds: countRows(tra.kinds, trb.kinds), Methods: countRows(tra.methods, trb.methods)}
	res.Transient = []StoryHunk{}
	for _, h := range hunks(align(res.A.Story, res.B.Story)) {
		sh, sa, sb := storyHunk(res.A.Story, res.B.Story, h)
		if h.a1 < len(res.A.Story) && h.b1 < len(res.B.Story) {
			res.Transient = append(res.Transient, sh)
			continue
		}
		// Only the last stretch can reach the end of a story.
		res.Divergence = &Divergence{StoryHunk: sh, Diff: stateDiff(sa, sb)}
	}
	res.Suites = suiteDiffs(res.A.Verdict, res.B.Verdict)
	res.Same = res.Divergence == nil && res.A.Verdict.Status == res.B.Verdict.Status &&
		failingCheck(res.A.Verdict.Failure) == failingCheck(res.B.Verdict.Failure) && !slices.ContainsFunc(res.Suites, func(d SuiteDiff) bool { return !d.Same() })
	return res, nil
}

// readSide reads one bundle once, through replay: its hooks count the
// traffic and find the run's secret (per event), count the RPC requests (per
// protocol event) and tell the story (per observation) while the engine
// computes the verdict.
func readSide(ctx context.Context, path string, side *DiffSide, spec *delivery.Spec) (*traffic, error) {
	tr := newTraffic()
	sb := &storyBuilder{}
	opts := &replay.EngineOptions{
		OnBundleEvent: func(ev *bundle.Event) {
			tr.event(ev)
			sb.secret = tr.secret
		},
		OnEvent:   tr.protocolEvent,
		Scenarios: []replay.Scenario{delivery.SpecOr(spec).Observed(sb.observe)},
	}
	r, err := replay.ReplayFile(ctx, path, &replay.Options{Engine: opts})
	if err != nil {
		return nil, sideError(ctx, path, err)
	}
	*side = DiffSide{Path: path, Tool: r.Header.Tool, Manifest: r.Header.Manifest, Verdict: r.Verdict,
		Truncated: r.Truncated, Events: r.Events, Story: sb.steps}
	if side.Story == nil {
		side.Story = []StoryStep{}
	}
	return tr, nil
}

func sideError(ctx context.Context, path string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return &BundleError{Path: path, Err: err}
}

// storyHunk describes hunk h of two stories, with the state each side is in
// at its start.
func storyHunk(a, b []StoryStep, h hunk) (StoryHunk, StoryState, StoryState) {
	sa, seqA := stateAt(a, h.a0, h.a0 < h.a1)
	sb, seqB := stateAt(b, h.b0, h.b0 < h.b1)
	return StoryHunk{AIndex: h.a0, AEnd: h.a1, BIndex: h.b0, BEnd: h.b1, ASeq: seqA, BSeq: seqB}, sa, sb
}

// stateAt is the state a side is in at step i: step i itself when the side
// has a step of its own there, else the step before (the state it stayed in),
// and the seq to inspect.
func stateAt(s []StoryStep, i int, own bool) (StoryState, uint64) {
	if own {
		return s[i].State, s[i].Seq
	}
	if i == 0 {
		return StoryState{}, 0
	}
	return s[i-1].State, s[i-1].LastSeq
}

// blankVerdict returns v without what differs between any two runs: ids,
// seqs, times and the secret.
func blankVerdict(v assert.Verdict, secret string) assert.Verdict {
	if v.ThreadID != "" {
		v.ThreadID = "<ID>"
	}
	if v.AcknowledgementIDs != nil {
		ids := make([]string, len(v.AcknowledgementIDs))
		for i := range ids {
			ids[i] = "<ID>"
		}
		v.AcknowledgementIDs = ids
	}
	v.Failure = blankFailure(v.Failure, secret)
	if v.Suites != nil {
		suites := make([]assert.SuiteResult, len(v.Suites))
		for i, s := range v.Suites {
			s.Failure = blankFailure(s.Failure, secret)
			suites[i] = s
		}
		v.Suites = suites
	}
	if v.Milestones != nil {
		m := *v.Milestones
		v.Milestones = &m
	}
	return v
}

// blankFailure is f without its seq, time, ids and the secret.
func blankFailure(f *assert.Failure, secret string) *assert.Failure {
	if f == nil {
		return nil
	}
	b := *f
	b.Seq, b.T = 0, 0
	b.ThreadID, b.RunID = scrub.Text(b.ThreadID, secret), scrub.Text(b.RunID, secret)
	b.Expected, b.Seen, b.Diff = scrub.Text(b.Expected, secret), scrub.Text(b.Seen, secret), scrub.Text(b.Diff, secret)
	return &b
}

// headerDiff lists the manifest fields (and the tool) that differ.
func headerDiff(a, b *DiffSide) []FieldDiff {
	ma, mb := a.Manifest, b.Manifest
	fields := []FieldDiff{
		{"scenario", ma.Scenario, mb.Scenario},
		{"provider", ma.Provider, mb.Provider},
		{"model", ma.Model, mb.Model},
		{"revision", ma.Revision, mb.Revision},
		{"dirty", strconv.FormatBool(ma.Dirty), strconv.FormatBool(mb.Dirty)},
		{"tool", a.Tool, b.Tool},
		{"truncated", strconv.FormatBool(a.Truncated), strconv.FormatBool(b.Truncated)},
	}
	keys := slices.Sorted(maps.Keys(ma.Options))
	for k := range mb.Options {
		if _, ok := ma.Options[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fields = append(fields, FieldDiff{"option " + k, ma.Options[k], mb.Options[k]})
	}
	out := []FieldDiff{}
	for _, f := range fields {
		if f.A != f.B {
			out = append(out, f)
		}
	}
	return out
}

// countRows merges two count maps into rows sorted by name.
func countRows(a, b map[string]int) []CountRow {
	names := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	rows := make([]CountRow, 0, len(names))
	for _, n := range names {
		rows = append(rows, CountRow{Name: n, A: a[n], B: b[n]})
	}
	return rows
}
