package verify

import (
	"net/http"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
)

// gatePolicy is the reference verifier's gate: the child's request is held
// until the parent's first turn is over (and, in nested, the child has
// delegated in turn), then answered with the secret, or 503 when failure is
// injected. In active, the parent's own /parent request keeps its turn open and
// is answered once the child's completion is delivered, and activeSettle
// after it (see there). Every other request is answered 404 at once. It runs
// on the driver goroutine only, which selects on settled.
type gatePolicy struct {
	scenario assert.Scenario
	failGate bool
	secret   string
	path     string
	settle   time.Duration // activeSettle; 0 answers the parent at delivery

	settleTimer *time.Timer // started at delivery, in active
	settledDone bool        // the settle time has passed

	child, parent         *record.HeldRequest
	released, parentFreed bool
	parentFinished        bool
	nestedChildFinished   bool
	delivered             bool
}

func (p *gatePolicy) arrived(req *record.HeldRequest) {
	switch {
	case req.Path == p.path+"/parent" && p.parent == nil:
		p.parent = req
		p.parentFinished = true
	case req.Path == p.path && p.child == nil:
		p.child = req
	default:
		req.Release(http.StatusNotFound, nil)
		return
	}
	p.apply()
}

func (p *gatePolicy) observe(st replay.Status) {
	if p.scenario != assert.ScenarioActive {
		p.parentFinished = st.Milestones.ParentFinished
	}
	p.nestedChildFinished = p.scenario != assert.ScenarioNested || st.Milestones.NestedChildFinished
	p.delivered = st.Milestones.Delivered
	p.apply()
}

func (p *gatePolicy) apply() {
	if !p.released && p.child != nil && p.parentFinished && (p.nestedChildFinished || p.scenario != assert.ScenarioNested) {
		p.released = true
		if p.failGate {
			p.child.Release(http.StatusServiceUnavailable, []byte("Injected dependency failure"))
		} else {
			p.child.Release(http.StatusOK, []byte(p.secret))
		}
	}
	if p.scenario == assert.ScenarioActive && p.delivered && p.parent != nil && !p.parentFreed {
		if p.settle > 0 && !p.settledDone {
			if p.settleTimer == nil {
				p.settleTimer = time.NewTimer(p.settle)
			}
			return
		}
		p.parentFreed = true
		p.parent.Release(http.StatusOK, []byte("Completion notification delivered. Read task_status now."))
	}
}

// activeSettle is how long the parent's /parent request is held in active
// after the server has delivered the child's completion. A provider CLI reads
// the wake from its stdin while the foreground request runs, and relays it to
// the model with that request's result; answered at the moment of delivery,
// the request's end can reach the CLI before the wake has been read (it
// happened with Claude Code at a load average of 10), and the CLI then ends
// its turn and takes the wake as a new one: a run the scenario forbids, which
// the server did not cause. Held a second longer, a server that starts a new
// run anyway is still seen doing it.
const activeSettle = time.Second

// settled is ready when the settle time after delivery has passed (nil,
// never ready, until it starts).
func (p *gatePolicy) settled() <-chan time.Time {
	if p.settleTimer == nil || p.settledDone {
		return nil
	}
	return p.settleTimer.C
}

// settleEnded is the settle time's end: the parent is answered.
func (p *gatePolicy) settleEnded() {
	p.settledDone = true
	p.apply()
}

// stop stops the settle timer, if it runs.
func (p *gatePolicy) stop() {
	if p.settleTimer != nil {
		p.settleTimer.Stop()
	}
}
