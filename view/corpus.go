package view

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
)

// Row is one bundle of the corpus page.
type Row struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Scenario  string `json:"scenario"`
	Fault     string `json:"fault,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
	// Status is the replayed verdict's (passed, failed, skipped), or
	// "unreadable" when the bundle could not be read.
	Status assert.Status `json:"status"`
	Check  string        `json:"check,omitempty"`
	Seq    uint64        `json:"seq,omitempty"` // the deciding event of a failure
	// Replay is how the replay compares with the recorded verdict.
	Replay    replay.Reproduction `json:"replay,omitempty"`
	Duration  int64               `json:"duration"` // ns, the last event's time
	Events    uint64              `json:"events"`
	Revision  string              `json:"revision,omitempty"`
	Dirty     bool                `json:"dirty,omitempty"`
	Truncated bool                `json:"truncated,omitempty"`
	Error     string              `json:"error,omitempty"`
	// SuiteStatus is what results.json says of the run, when it came from one.
	SuiteStatus string `json:"suiteStatus,omitempty"`
}

// Rate is how often a scenario, or a check within a scenario, failed across
// its runs (the flake rate).
type Rate struct {
	Scenario string  `json:"scenario"`
	Check    string  `json:"check,omitempty"` // empty: the scenario as a whole
	Runs     int     `json:"runs"`
	Failed   int     `json:"failed"`
	Rate     float64 `json:"rate"`
}

// summarize replays one bundle for its corpus row: the verdict through
// replay.ReplayFile, as `wireproof replay` does, and the duration from a
// second pass that decodes no payload.
func summarize(ctx context.Context, src Source, id string, spec delivery.Spec) Row {
	row := Row{ID: id, Name: src.Name, Path: src.Path, Iteration: src.Iteration, SuiteStatus: src.Status}
	res, err := replay.ReplayFile(ctx, src.Path, spec.Options(nil))
	if err != nil {
		row.Status, row.Error = assert.StatusUnreadable, err.Error()
		if de := (*bundle.DamagedError)(nil); errors.As(err, &de) {
			row.Status = assert.StatusDamaged // never listed as passed
		}
		return row
	}
	fillRow(&row, res)
	if d, err := lastTime(ctx, src.Path); err == nil {
		row.Duration = d
	}
	return row
}

func fillRow(row *Row, res *replay.Result) {
	m := res.Header.Manifest
	row.Scenario, row.Fault, row.Revision, row.Dirty = res.Scenario, m.Options["fault"], m.Revision, m.Dirty
	if row.Scenario == "" {
		row.Scenario = string(res.Verdict.Scenario)
	}
	if n, err := strconv.Atoi(m.Options["iteration"]); row.Iteration == 0 && err == nil {
		row.Iteration = n
	}
	row.Status, row.Events, row.Truncated = res.Verdict.Status, res.Events, res.Truncated
	if f := res.Verdict.Failure; f != nil {
		row.Check, row.Seq = f.Check, f.Seq
	}
	row.Replay = res.Reproduction()
}

// lastTime is the time of the bundle's last event.
func lastTime(ctx context.Context, path string) (int64, error) {
	r, err := bundle.Open(path, &bundle.ReaderOptions{SkipBody: func(bundle.Kind) bool { return true }})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var t int64
	err = each(ctx, r, func(ev *bundle.Event) bool { t = ev.T; return true })
	return t, err
}

// summarizeAll builds every row, GOMAXPROCS at a time, in input order.
func summarizeAll(ctx context.Context, srcs []Source, ids []string, spec delivery.Spec) []Row {
	rows := make([]Row, len(srcs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range srcs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rows[i] = summarize(ctx, srcs[i], ids[i], spec)
		}()
	}
	wg.Wait()
	return rows
}

// rates counts failures per scenario and per failing check across the rows.
// A row counts as failed when its replayed verdict failed or diverged from
// the recorded one; unreadable bundles count as failed runs with no check.
func rates(rows []Row) []Rate {
	type key struct{ scenario, check string }
	runs := map[string]int{}
	failed := map[key]int{}
	for _, r := range rows {
		if r.Status == assert.StatusSkipped || r.Status == assert.StatusNotApplicable {
			continue // no verification to count: nothing was checked
		}
		sc := r.Scenario
		if sc == "" {
			sc = "(none)"
		}
		runs[sc]++
		if r.Status == assert.StatusFailed || r.Status == assert.StatusUnreadable || r.Status == assert.StatusDamaged || r.Replay == replay.Diverged {
			failed[key{sc, ""}]++
			check := r.Check
			switch {
			case r.Status == assert.StatusUnreadable:
				check = "(unreadable)"
			case r.Status == assert.StatusDamaged:
				check = "(damaged)"
			case check == "" && r.Replay == replay.Diverged:
				check = "(diverged)"
			}
			failed[key{sc, check}]++
		}
	}
	out := []Rate{} // none is an empty list, not null: the page maps over it
	for sc, n := range runs {
		out = append(out, Rate{Scenario: sc, Runs: n, Failed: failed[key{sc, ""}], Rate: float64(failed[key{sc, ""}]) / float64(n)})
	}
	for k, f := range failed {
		if k.check != "" {
			out = append(out, Rate{Scenario: k.scenario, Check: k.check, Runs: runs[k.scenario], Failed: f, Rate: float64(f) / float64(runs[k.scenario])})
		}
	}
	slices.SortFunc(out, func(a, b Rate) int {
		return cmp.Or(cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Check, b.Check))
	})
	return out
}
