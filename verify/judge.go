package verify

import (
	"fmt"
	"sync"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay"
)

// judge subscribes a replay.Engine to the recorder: it gets exactly the events
// the bundle gets, in seq order, on the recorder's delivery goroutine. The
// driver reads the engine's status through it and waits for it to catch up
// before it takes the verdict, so the live verdict covers the same events that
// replay will read.
type judge struct {
	mu      sync.Mutex
	caught  *sync.Cond
	eng     *replay.Engine
	last    uint64
	fed     bool
	status  replay.Status
	broken  error // the engine failed or panicked: the live verdict cannot be trusted
	updates chan struct{}
}

func newJudge() *judge {
	j := &judge{eng: replay.NewEngine(nil), updates: make(chan struct{}, 1)}
	j.caught = sync.NewCond(&j.mu)
	return j
}

// Event implements record.Subscriber.
func (j *judge) Event(ev *bundle.Event) (err error) {
	j.mu.Lock()
	defer func() {
		if p := recover(); p != nil {
			j.broken = fmt.Errorf("check engine panicked at seq %d: %v", ev.Seq, p)
			err = j.broken
		}
		j.last, j.fed = ev.Seq, true
		j.caught.Broadcast()
		j.mu.Unlock()
		select {
		case j.updates <- struct{}{}:
		default:
		}
	}()
	if j.broken != nil {
		return j.broken
	}
	if err := j.eng.Feed(ev); err != nil {
		j.broken = fmt.Errorf("check engine: %w", err)
		return j.broken
	}
	j.status = j.eng.Status()
	return nil
}

// Status is the engine's status after the last event it was fed.
func (j *judge) Status() replay.Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.status
}

// waitFor blocks until the engine has been fed the event with seq (or later),
// or the engine broke.
func (j *judge) waitFor(seq uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for (!j.fed || j.last < seq) && j.broken == nil {
		j.caught.Wait()
	}
}

// verdict is the engine's verdict over everything fed so far.
func (j *judge) verdict() (assert.Verdict, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.broken != nil {
		return assert.Verdict{}, j.broken
	}
	return j.eng.Verdict(), nil
}
