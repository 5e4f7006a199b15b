package verify

import (
	"net/http"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
)

// gatePolicy is the reference verifier's gate: the child's request is held
// until the parent's first turn is over (and, in nested, the child has
// delegated in turn), then answered with the secret, or 503 when failure is
// injected. In active, the parent's own /parent request keeps its turn open and
// is answered once the child's completion is delivered. Every other request is
// answered 404 at once. It runs on the driver goroutine only.
type gatePolicy struct {
	scenario assert.Scenario
	failGate bool
	secret   string
	path     string

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
		p.parentFreed = true
		p.parent.Release(http.StatusOK, []byte("Completion notification delivered. Read task_status now."))
	}
}
