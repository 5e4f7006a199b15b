package replay

import (
	"sync"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
)

// Live runs an Engine as a subscriber of the recorder: the recorder calls
// Event from its goroutine with every event in seq order, exactly the events
// the bundle gets, and the driver watches Updates from another goroutine.
// Event, Updates, Status and Verdict are safe for concurrent use.
type Live struct {
	mu      sync.Mutex
	engine  *Engine
	last    Status
	updates chan Status
}

// NewLive returns a Live with a fresh engine.
func NewLive(opts *EngineOptions) *Live {
	l := &Live{engine: NewEngine(opts), updates: make(chan Status, 1)}
	l.last = l.engine.Status()
	return l
}

// Event feeds ev to the engine and publishes the status if it changed. It
// returns the engine's error (a seq gap).
func (l *Live) Event(ev *bundle.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.engine.Feed(ev); err != nil {
		return err
	}
	l.publish()
	return nil
}

// publish sends the status if it changed, replacing an unread older one.
// Called with mu held: only one goroutine ever sends.
func (l *Live) publish() {
	s := l.engine.Status()
	if cmp.Equal(s, l.last) {
		return
	}
	l.last = s
	for {
		select {
		case l.updates <- s:
			return
		default:
		}
		select {
		case <-l.updates: // drop the unread older status
		default:
		}
	}
}

// Updates delivers status changes with latest-value semantics: a newer status
// replaces one not yet read. It is never closed.
func (l *Live) Updates() <-chan Status { return l.updates }

// Status is the engine's current status.
func (l *Live) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.engine.Status()
}

// Verdict finalizes (if undecided) and returns the verdict; see Engine.Verdict.
func (l *Live) Verdict() assert.Verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.engine.Verdict()
	l.publish()
	return v
}
