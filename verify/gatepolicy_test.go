package verify

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
)

// TestActiveParentHeldAfterDelivery holds the parent's /parent request of an
// active run, through a real gate and real HTTP requests, past the child's
// delivery until the settle time ends, and answers it then: answered at the
// moment of delivery, a provider CLI could end its turn before it has read
// the wake.
func TestActiveParentHeldAfterDelivery(t *testing.T) {
	ctx := t.Context()
	rec := record.New(nil, nil)
	defer rec.Close()
	gate, err := record.StartGate(ctx, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Close()

	answered := make(chan string, 1)
	go func() {
		res, err := http.Get(gate.URL() + "/g/parent")
		if err != nil {
			answered <- "error: " + err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		answered <- string(b)
	}()
	p := &gatePolicy{scenario: assert.ScenarioActive, secret: "s3cret", path: "/g", settle: time.Hour}
	defer p.stop()
	p.arrived(<-gate.Requests())
	if p.settled() != nil {
		t.Fatal("the settle time started before the delivery")
	}
	p.observe(replay.Status{Milestones: assert.Milestones{Delivered: true}})
	if p.settled() == nil {
		t.Fatal("the delivery started no settle time")
	}
	p.observe(replay.Status{Milestones: assert.Milestones{Delivered: true}})
	select {
	case got := <-answered:
		t.Fatalf("the parent was answered %q before the settle time ended", got)
	case <-time.After(50 * time.Millisecond):
	}
	p.settleEnded()
	want := "Completion notification delivered. Read task_status now."
	select {
	case got := <-answered:
		if got != want {
			t.Errorf("the parent was answered %q, want %q", got, want)
		}
	case <-ctx.Done():
		t.Fatal("the parent was never answered")
	}
	if p.settled() != nil {
		t.Error("the settle time is still pending once ended")
	}
}

// TestSettleOnlyInActive: the other scenarios answer as before, with no
// settle time.
func TestSettleOnlyInActive(t *testing.T) {
	for _, sc := range []assert.Scenario{assert.ScenarioIdle, assert.ScenarioNative, assert.ScenarioNested} {
		p := &gatePolicy{scenario: sc, settle: time.Hour}
		p.observe(replay.Status{Milestones: assert.Milestones{Delivered: true, ParentFinished: true}})
		if p.settled() != nil {
			t.Errorf("%s: a settle time started", sc)
		}
	}
}
