package assert

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/wireproof/wireproof/t3"
)

// RestartRead is the HTTP read of the parent thread after the restart.
type RestartRead struct {
	Status int    // HTTP status
	Body   []byte // the response body
	Err    string // why the exchange ended early, if it did
	// NotMade, when set, says why the read could not be made at all: the
	// driver's error at the step it failed (a driver-error mark).
	NotMade *StepError
}

// durableRead is the shape the reference's restart check requires: a
// projection with messages and runs (both present).
type durableRead struct {
	Projection *struct {
		Messages *[]t3.Message `json:"messages"`
		Runs     *[]t3.Run     `json:"runs"`
	} `json:"projection"`
}

// durable decodes the restart read into the projection the later restart
// checks compare, or says why it cannot (restart-read's failure).
func durable(r RestartRead) (*t3.Projection, *Failure) {
	if r.NotMade != nil {
		return nil, miss("HTTP 2xx with the thread", fmt.Sprintf("the restart read could not be made (%s): %s", r.NotMade.Step, r.NotMade.Error))
	}
	if r.Status < 200 || r.Status > 299 || r.Err != "" {
		seen := fmt.Sprintf("HTTP %d", r.Status)
		if r.Err != "" {
			seen += ": " + r.Err
		}
		return nil, miss("HTTP 2xx with the thread", seen)
	}
	var d durableRead
	if err := json.Unmarshal(r.Body, &d); err != nil {
		return nil, miss("a decodable thread read", "undecodable body: "+err.Error())
	}
	if d.Projection == nil || d.Projection.Messages == nil || d.Projection.Runs == nil {
		return nil, miss("a thread read with projection.messages and projection.runs", "a body without them")
	}
	return &t3.Projection{Messages: *d.Projection.Messages, Runs: *d.Projection.Runs}, nil
}

// The durability checks on the restart read (BackgroundDelivery.Restart).
// restart-read judges the read itself; the others compare its projection
// with what the final checks saw, and pass a read restart-read failed.

func restartRead(r Restarted) *Failure {
	_, f := durable(r.Read)
	return f
}

func restartAcknowledgement(r Restarted) *Failure {
	p, bad := durable(r.Read)
	if bad != nil {
		return nil
	}
	got := AcknowledgementIDs(p, r.Secret)
	if slices.Equal(r.AcknowledgementIDs, got) { // nil and empty are equal
		return nil
	}
	x := miss(fmt.Sprint(r.AcknowledgementIDs), fmt.Sprint(got))
	x.Diff = valueDiff(r.AcknowledgementIDs, got)
	return x
}

func restartRunsCompleted(r Restarted) *Failure {
	p, bad := durable(r.Read)
	if bad != nil {
		return nil
	}
	for _, run := range p.Runs {
		if run.Status != t3.RunCompleted {
			x := diffMiss(t3.RunCompleted, run.Status)
			x.Seen = fmt.Sprintf("run %s is %s", run.ID, run.Status)
			x.RunID = run.ID
			return x
		}
	}
	return nil
}

func restartNoExtraRun(r Restarted) *Failure {
	p, bad := durable(r.Read)
	if bad != nil {
		return nil
	}
	got := len(p.Runs)
	if got == r.RunCount {
		return nil
	}
	x := diffMiss(r.RunCount, got)
	x.Expected, x.Seen = fmt.Sprintf("%d runs", r.RunCount), fmt.Sprintf("%d runs: %s", got, runStates(p))
	x.RunID = lastRunID(p)
	return x
}
