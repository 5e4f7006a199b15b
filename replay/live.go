package replay

import (
	"fmt"
	"sync"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
)

// Live runs an Engine as a subscriber of the recorder: the recorder calls
// Event from its goroutine with every event in seq order, exactly the events
// the bundle gets, and the driver watches Updates from another goroutine.
// Event, Updates, Status and Verdict are safe for concurrent use.
//
// WaitFor lets the driver wait until the engine has seen a given event, so
// the verdict it takes covers exactly the events replay will read.
type Live struct {
	mu      sync.Mutex
	fed     *sync.Cond // an event was fed, or the engine broke
	engine  *Engine
	last    Status
	updates chan Status
	seen    uint64 // seq of the last event fed
	broken  error  // the engine failed (a seq gap) or panicked: its verdict cannot be trusted
}

// NewLive returns a Live with a fresh engine.
func NewLive(opts *EngineOptions) *Live {
	l := &Live{engine: NewEngine(opts), updates: make(chan Status, 1)}
	l.fed = sync.NewCond(&l.mu)
	l.last = l.engine.Status()
	return l
}

// Header feeds the bundle's header, as replay does before the first event
// (see Engine.FeedHeader). Call it before the recorder delivers events.
func (l *Live) Header(h bundle.Header) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.engine.FeedHeader(h); err != nil {
		return err
	}
	l.publish()
	return nil
}

// Event feeds ev to the engine and publishes the status if it changed. It
// returns the engine's error (a seq gap), or the panic it recovered; after
// either, every later call returns the same error.
func (l *Live) Event(ev *bundle.Event) (err error) {
	l.mu.Lock()
	defer func() {
		if p := recover(); p != nil {
			l.broken = fmt.Errorf("replay: check engine panicked at seq %d: %v", ev.Seq, p)
			err = l.broken
		}
		l.seen = ev.Seq
		l.fed.Broadcast()
		l.mu.Unlock()
	}()
	if l.broken != nil {
		return l.broken
	}
	if err := l.engine.Feed(ev); err != nil {
		l.broken = err
		return err
	}
	l.publish()
	return nil
}

// WaitFor blocks until the event with seq (or a later one) has been fed, or
// the engine broke; it returns Err.
func (l *Live) WaitFor(seq uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.seen < seq && l.broken == nil {
		l.fed.Wait()
	}
	return l.broken
}

// Err says why the engine broke, or nil.
func (l *Live) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.broken
}

// publish sends the status if it changed, replacing an unread older one.
// Called with mu held: only one goroutine ever sends.
func (l *Live) publish() {
	s := l.engine.Status()
	if s.equal(l.last) {
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
