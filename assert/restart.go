package assert

import (
	"encoding/json"
	"fmt"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wireproof/wireproof/t3"
)

// RestartRead is the HTTP read of the parent thread after the restart.
type RestartRead struct {
	Status int    // HTTP status
	Body   []byte // the response body
	Err    string // why the exchange ended early, if it did
}

// durableRead is the shape the reference's restart check requires: a
// projection with messages and runs (both present).
type durableRead struct {
	Projection *struct {
		Messages *[]t3.Message `json:"messages"`
		Runs     *[]t3.Run     `json:"runs"`
	} `json:"projection"`
}

// RestartChecks runs the durability checks on the restart read against what the
// main phase saw: restart-read, restart-acknowledgement, restart-runs-completed,
// restart-no-extra-run.
func (s Suite) RestartChecks(r RestartRead, runCount int, ackIDs []string) *Failure {
	if r.Status < 200 || r.Status > 299 || r.Err != "" {
		seen := fmt.Sprintf("HTTP %d", r.Status)
		if r.Err != "" {
			seen += ": " + r.Err
		}
		return fail(CheckRestartRead, "HTTP 2xx with the thread", seen)
	}
	var d durableRead
	if err := json.Unmarshal(r.Body, &d); err != nil {
		return fail(CheckRestartRead, "a decodable thread read", "undecodable body: "+err.Error())
	}
	if d.Projection == nil || d.Projection.Messages == nil || d.Projection.Runs == nil {
		return fail(CheckRestartRead, "a thread read with projection.messages and projection.runs", "a body without them")
	}
	p := &t3.Projection{Messages: *d.Projection.Messages, Runs: *d.Projection.Runs}
	got := AcknowledgementIDs(p, s.Secret)
	if !cmp.Equal(ackIDs, got, cmpopts.EquateEmpty()) {
		x := fail(CheckRestartAcknowledgement, fmt.Sprint(ackIDs), fmt.Sprint(got))
		x.Diff = valueDiff(ackIDs, got)
		return x
	}
	for _, run := range p.Runs {
		if run.Status != t3.RunCompleted {
			x := diffFail(CheckRestartRunsCompleted, t3.RunCompleted, run.Status)
			x.Seen = fmt.Sprintf("run %s is %s", run.ID, run.Status)
			x.RunID = run.ID
			return x
		}
	}
	if got := len(p.Runs); got != runCount {
		x := diffFail(CheckRestartNoExtraRun, runCount, got)
		x.Expected, x.Seen = fmt.Sprintf("%d runs", runCount), fmt.Sprintf("%d runs: %s", got, runStates(p))
		x.RunID = lastRunID(p)
		return x
	}
	return nil
}
