package bundleindex

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/wireproof/wireproof/assert"
)

// ScenarioStats are one scenario's runs across repeats (and revisions).
type ScenarioStats struct {
	Scenario string  `json:"scenario"`
	Runs     int     `json:"runs"`     // passed + failed, faults not injected
	Passed   int     `json:"passed"`   // verdict passed
	Failed   int     `json:"failed"`   // verdict failed
	FailRate float64 `json:"failRate"` // failed / runs
	// Flaky: the same scenario both passed and failed.
	Flaky bool `json:"flaky"`
	// Incomplete counts bundles without a verdict, Unreadable those that
	// could not be read or are damaged, Faulted the runs that injected a
	// fault on purpose (Entry.Fault; their failure is the expected one);
	// none of them is in Runs, so a fault-injected failure beside clean
	// passes is not a flake.
	Incomplete int `json:"incomplete"`
	Unreadable int `json:"unreadable"`
	Faulted    int `json:"faulted"`
	// NotApplicable counts the runs whose scenario cannot apply to their
	// provider (verdict not-applicable): nothing was verified, so they are
	// not in Runs either.
	NotApplicable int `json:"notApplicable"`
}

// CheckStats are the failures one check caused in one scenario.
type CheckStats struct {
	Scenario string  `json:"scenario"`
	Check    string  `json:"check"`
	Failures int     `json:"failures"`
	Runs     int     `json:"runs"` // the scenario's runs
	Rate     float64 `json:"rate"` // failures / runs
}

// Stats computes the per-scenario and per-check figures, sorted by scenario
// (and by failures, then check, within one). The DuckDB queries of docs/storage.md
// compute the same numbers from the index file.
func Stats(entries []Entry) ([]ScenarioStats, []CheckStats) {
	byScenario := map[string]*ScenarioStats{}
	checks := map[[2]string]int{}
	for _, e := range entries {
		s := byScenario[e.Scenario]
		if s == nil {
			s = &ScenarioStats{Scenario: e.Scenario}
			byScenario[e.Scenario] = s
		}
		switch {
		case e.Status == StatusUnreadable || e.Status == StatusDamaged: // neither is evidence of a run
			s.Unreadable++
			continue
		case e.Status == StatusIncomplete:
			s.Incomplete++
			continue
		case e.Fault != "":
			s.Faulted++
			continue
		}
		switch e.Status {
		case assert.StatusPassed:
			s.Passed++
		case assert.StatusFailed:
			s.Failed++
			checks[[2]string{e.Scenario, e.Check}]++
		case assert.StatusNotApplicable:
			s.NotApplicable++
		}
	}
	var scen []ScenarioStats
	for _, s := range byScenario {
		s.Runs = s.Passed + s.Failed
		if s.Runs > 0 {
			s.FailRate = float64(s.Failed) / float64(s.Runs)
		}
		s.Flaky = s.Passed > 0 && s.Failed > 0
		scen = append(scen, *s)
	}
	sort.Slice(scen, func(i, j int) bool { return scen[i].Scenario < scen[j].Scenario })
	var chk []CheckStats
	for k, n := range checks {
		runs := byScenario[k[0]].Passed + byScenario[k[0]].Failed
		chk = append(chk, CheckStats{Scenario: k[0], Check: k[1], Failures: n, Runs: runs, Rate: float64(n) / float64(runs)})
	}
	sort.Slice(chk, func(i, j int) bool {
		a, b := chk[i], chk[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Failures != b.Failures {
			return a.Failures > b.Failures
		}
		return a.Check < b.Check
	})
	return scen, chk
}

// WriteStats prints the figures as two aligned tables.
func WriteStats(w io.Writer, scen []ScenarioStats, chk []CheckStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tRUNS\tPASSED\tFAILED\tFAIL%\tFLAKY\tINCOMPLETE\tUNREADABLE\tFAULTED\tN/A")
	for _, s := range scen {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f\t%s\t%d\t%d\t%d\t%d\n", orDash(s.Scenario), s.Runs, s.Passed, s.Failed, 100*s.FailRate, yesNo(s.Flaky), s.Incomplete, s.Unreadable, s.Faulted, s.NotApplicable)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "SCENARIO\tCHECK\tFAILURES\tRUNS\tRATE%")
	for _, c := range chk {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\n", orDash(c.Scenario), orDash(c.Check), c.Failures, c.Runs, 100*c.Rate)
	}
	if len(chk) == 0 {
		fmt.Fprintln(tw, "(no failed runs)")
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
