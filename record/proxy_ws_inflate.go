package record

import (
	"sync"
	"sync/atomic"
)

// inflateShared is how much a compressed WebSocket message may inflate to
// before its decompression waits for its turn (inflateOrder): a few
// kilobytes can inflate to the recording limit (64 MiB of zeros from 64
// KiB), and each connection decompresses on a goroutine of its own, so
// without the turns a few hundred kilobytes sent on a dozen connections at
// once held more than a gigabyte of the proxy's memory.
const inflateShared = 1 << 20

// inflateShares counts the decompressions that waited for their turn, in
// the process (for the tests).
var inflateShares atomic.Int64

// inflateOrder gives the proxy's compressed WebSocket messages tickets in
// the order of their places in the recording, and lets a large one (past
// inflateShared) go on only once every message with an earlier ticket is
// done: a small one once it is inflated, a large one once it is written
// (EmitWritten). So one large decompression, and its encoded event, is in
// memory at a time, and it never waits in memory for an earlier place of
// another large one.
//
// It cannot deadlock: a message waits only for earlier places. The one
// with the earliest unfinished ticket waits for no turn; what its writing
// waits for (earlier places) is filled by goroutines that are at earlier
// places of their own queues, down to places that wait for nothing.
type inflateOrder struct {
	mu       sync.Mutex
	turn     sync.Cond
	next     uint64          // the next ticket to give
	low      uint64          // every ticket below it is done
	finished map[uint64]bool // tickets at or above low that are done
}

func newInflateOrder() *inflateOrder {
	o := &inflateOrder{finished: map[uint64]bool{}}
	o.turn.L = &o.mu
	return o
}

// reserve takes the next place in rec's order and the next ticket,
// together, so that ticket order is place order.
func (o *inflateOrder) reserve(rec *Recorder) (*Reservation, uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	res := rec.Reserve()
	t := o.next
	o.next++
	return res, t
}

// wait returns once every ticket before t is done.
func (o *inflateOrder) wait(t uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.low < t {
		o.turn.Wait()
	}
}

// done marks ticket t done.
func (o *inflateOrder) done(t uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.finished[t] = true
	advanced := false
	for o.finished[o.low] {
		delete(o.finished, o.low)
		o.low++
		advanced = true
	}
	if advanced {
		o.turn.Broadcast()
	}
}
