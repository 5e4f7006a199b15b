package record

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
	"github.com/wireproof/wireproof/bundle"
)

// wsQueueMax bounds the message bytes a connection's relay may have handed
// to its recording and not yet seen written: past it, the relay waits before
// it holds more, so a recording that falls behind slows the connection down
// instead of growing memory.
const wsQueueMax = 8 << 20

// wsBig is the message size from which a message is big: its buffer is one
// of a connection's bigSlots, reused from message to message, and its
// recording waits until the bundle writer has written it before the buffer
// is given back. A run of 64 MiB messages then holds two at a time, one being
// relayed while the one before is recorded, and makes no garbage: memory
// stays near twice the message size without forcing the garbage collector.
// Where it can (mapBig), a big buffer is mapped outside the heap, and it is
// given back to the kernel when the connection ends.
const wsBig = 4 << 20

// bigSlots is how many big messages a connection holds at once.
const bigSlots = 2

// wsItem is one event of a relayed connection waiting to be recorded in the
// place the relay took for it.
type wsItem struct {
	res     *Reservation
	ev      *bundle.Event
	held    int64
	inflate bool
	ticket  uint64 // with inflate: its turn (inflateOrder)
	big     []byte // the buffer of a big message, given back once written
}

// wsQueue hands the events of a connection that are not recorded on the
// relay's goroutine (big and compressed messages, control frames, ends)
// from its two relay directions to the goroutine that records them, in the
// order their places were taken.
type wsQueue struct {
	rl      *wsRelay
	inflate [2]*wsInflater // by direction: c2s, s2c
	mu      sync.Mutex
	room    sync.Cond // held went down
	items   []wsItem
	held    atomic.Int64 // changed with mu held; read without it by waitRoom
	closed  bool
	wake    chan struct{}
	spare   []wsItem

	// Big messages (guarded by mu, waited for with room).
	bigUsed  int      // slots taken: messages being relayed or recorded
	bigSpare [][]byte // buffers of recorded big messages, for the next
	mapped   [][]byte // buffers of mapBig not yet unmapped
}

func newWSQueue(rl *wsRelay, resp http.Header) *wsQueue {
	q := &wsQueue{rl: rl, wake: make(chan struct{}, 1)}
	q.room.L = &q.mu
	if rl.deflate {
		params := strings.ToLower(resp.Get("Sec-WebSocket-Extensions"))
		q.inflate[0] = &wsInflater{takeover: !strings.Contains(params, "client_no_context_takeover")}
		q.inflate[1] = &wsInflater{takeover: !strings.Contains(params, "server_no_context_takeover")}
	}
	return q
}

func (q *wsQueue) push(it wsItem) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.held.Add(it.held)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// waitRoom waits while the recording holds more than wsQueueMax bytes. The
// relay calls it for every data frame; without the lock unless it must wait.
func (q *wsQueue) waitRoom() {
	if q.held.Load() <= wsQueueMax {
		return
	}
	q.mu.Lock()
	for q.held.Load() > wsQueueMax && !q.closed {
		q.room.Wait()
	}
	q.mu.Unlock()
}

// takeBig takes one of the connection's big-message slots for a message of
// at least n bytes, waiting while both are taken, and returns a buffer for
// it (empty, capacity at least n): a spare one if there is one, else, unless
// a subscriber may keep events (Retains), a new one outside the heap (see
// mapBig) as large as the recording limit, so the message never outgrows
// it. nil means none: the message grows on the heap.
func (q *wsQueue) takeBig(n int) []byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.bigUsed >= bigSlots && !q.closed {
		q.room.Wait()
	}
	q.bigUsed++
	for i, b := range q.bigSpare {
		if cap(b) >= n {
			q.bigSpare = slices.Delete(q.bigSpare, i, i+1)
			return b[:0]
		}
	}
	if limit := q.rl.p.maxMsg; int64(n) <= limit && int64(int(limit)) == limit && !q.rl.p.rec.Retains() {
		if b := mapBig(int(limit)); b != nil {
			q.mapped = append(q.mapped, b)
			bigMaps.Add(1)
			bigMapped.Add(1)
			return b
		}
	}
	return nil
}

// bigMaps counts the buffers mapBig made, and bigMapped those not yet
// unmapped, in the process (for the tests).
var bigMaps, bigMapped atomic.Int64

// giveBig gives a slot back, with its buffer for reuse if buf is not nil
// (nothing refers to it any more). A buffer of takeBig's that is not given
// back (nil: it may still be referred to) is never unmapped.
func (q *wsQueue) giveBig(buf []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.bigUsed--
	if buf != nil {
		if len(q.bigSpare) < bigSlots {
			q.bigSpare = append(q.bigSpare, buf[:0])
		} else {
			q.unmapLocked(buf)
		}
	}
	q.room.Broadcast()
}

// unmapLocked gives buf back to the kernel if mapBig made it. q.mu is held.
func (q *wsQueue) unmapLocked(buf []byte) {
	for i, m := range q.mapped {
		if cap(buf) > 0 && cap(m) > 0 && &buf[:1][0] == &m[:1][0] {
			q.mapped = slices.Delete(q.mapped, i, i+1)
			unmapBig(m)
			bigMapped.Add(-1)
			return
		}
	}
}

// release gives back the spare big buffers once the connection is over:
// both directions have ended and run has returned, so nothing refers to
// them.
func (q *wsQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, b := range q.bigSpare {
		q.unmapLocked(b)
	}
	q.bigSpare = nil
}

// close ends run once everything pushed is recorded.
func (q *wsQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.room.Broadcast()
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run records the queued events until close.
func (q *wsQueue) run() {
	rec := q.rl.p.rec
	var bigs sync.WaitGroup
	defer bigs.Wait()
	for {
		q.mu.Lock()
		batch := q.items
		q.items = q.spare[:0]
		closed := q.closed
		q.mu.Unlock()
		for i := range batch {
			it := &batch[i]
			large := false
			if it.inflate {
				order, ticket := q.rl.p.inflates, it.ticket
				large = q.inflate[dirIndex(it.ev.Dir)].message(it.ev, q.rl.p.maxMsg, func() { order.wait(ticket) })
				if !large {
					order.done(ticket)
				}
			}
			held := it.held
			if it.big != nil {
				// A big message is redacted and encoded on a goroutine of
				// its own, while the next events are recorded (its place
				// in the order is taken). The writer may take its body as
				// it is: the buffer is reused only once the writer is done
				// with it, and not at all if a subscriber may still read
				// it. The big slots bound how many run at once. A recording
				// that failed or closed is done with it too (EmitWritten
				// returns once the writer has written or dropped it), and
				// the traffic still flows: its buffer is reused as well,
				// rather than a new one mapped for every big message.
				res, ev, big, ticket := it.res, it.ev, it.big, it.ticket
				bigs.Go(func() {
					_ = res.EmitWritten(ev)
					if large {
						q.rl.p.inflates.done(ticket)
					}
					if rec.Retains() {
						big = nil
					}
					q.giveBig(big)
				})
			} else if large {
				// Written before the next large decompression begins.
				_ = it.res.EmitWritten(it.ev)
				q.rl.p.inflates.done(it.ticket)
			} else {
				_ = it.res.Emit(it.ev)
			}
			*it = wsItem{}
			if held > 0 {
				q.mu.Lock()
				q.held.Add(-held)
				q.room.Broadcast()
				q.mu.Unlock()
			}
		}
		q.spare = batch[:0]
		if len(batch) == 0 {
			if closed {
				return
			}
			<-q.wake
		}
	}
}

func dirIndex(d bundle.Dir) int {
	if d == bundle.DirServerToClient {
		return 1
	}
	return 0
}

// deflateTail ends every permessage-deflate message on the wire (RFC 7692
// section 7.2.1 removes it; the receiver puts it back).
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff}

// wsInflater decompresses the permessage-deflate messages of one direction
// for the recording. With context takeover each message may refer back to
// the 32 KiB before it, so the window is kept from message to message.
type wsInflater struct {
	takeover bool
	window   []byte
	fr       io.ReadCloser
	broken   string // why the messages of this direction can no longer be decompressed
}

// message replaces ev's compressed body with the message it carries, up to
// limit bytes (the rest is counted in ev.Size and ev is marked Truncated).
// A message that cannot be decompressed is recorded as it came, with Err.
// Once it has inflated to inflateShared bytes it calls turn, which waits
// for its turn (inflateOrder), and reports that it is large.
func (in *wsInflater) message(ev *bundle.Event, limit int64, turn func()) (large bool) {
	if in.broken != "" {
		ev.Err = in.broken
		return false
	}
	if ev.Truncated {
		// The compressed bytes were cut at the limit: they cannot be
		// decompressed, nor anything that refers back to them.
		ev.Err = "compressed message larger than the recording limit: recorded compressed and cut"
		if in.takeover {
			in.broken = "cannot decompress: an earlier message this one may refer to was too large to record"
		}
		return false
	}
	src := io.MultiReader(bytes.NewReader(ev.Body.Data), bytes.NewReader(deflateTail))
	var dict []byte
	if in.takeover {
		dict = in.window
	}
	if in.fr == nil {
		in.fr = flate.NewReaderDict(src, dict)
	} else if err := in.fr.(flate.Resetter).Reset(src, dict); err != nil {
		in.broken = "cannot decompress: " + err.Error()
		ev.Err = in.broken
		return false
	}
	var out bytes.Buffer
	out.Grow(min(4*len(ev.Body.Data)+64, int(limit)))
	lb := &limitedBuffer{b: &out, limit: limit, keepTail: in.takeover, turn: turn}
	n, err := io.Copy(lb, in.fr)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		in.broken = "cannot decompress: " + err.Error()
		ev.Err = in.broken
		return lb.took
	}
	data := out.Bytes()
	if n > int64(len(data)) {
		ev.Truncated, ev.Size = true, n
	}
	if in.takeover {
		if ev.Truncated {
			// The message is recorded up to the limit, but the window the
			// next message may refer to is the end of all it inflated to:
			// the inflater kept it while it discarded the rest.
			in.window = append(in.window[:0], lb.tail...)
		} else {
			in.window = appendWindow(in.window, data)
		}
	}
	ev.Body.Data = data
	return lb.took
}

// appendWindow keeps the last 32 KiB of the output for the next message.
func appendWindow(w, out []byte) []byte {
	const size = 32 << 10
	if len(out) >= size {
		return append(w[:0], out[len(out)-size:]...)
	}
	w = append(w, out...)
	if len(w) > size {
		w = append(w[:0], w[len(w)-size:]...)
	}
	return w
}

// limitedBuffer keeps the first limit bytes written and counts the rest;
// with keepTail, once past the limit it also keeps the last 32 KiB of
// everything written (the deflate window the next message may refer to).
type limitedBuffer struct {
	b        *bytes.Buffer
	limit    int64
	keepTail bool
	tail     []byte

	// turn, if not nil, is called once inflateShared bytes are written,
	// and took says it was.
	turn    func()
	took    bool
	written int64
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if l.written += int64(n); l.written > inflateShared && l.turn != nil && !l.took {
		inflateShares.Add(1)
		l.turn()
		l.took = true
	}
	room := l.limit - int64(l.b.Len())
	if room > 0 {
		l.b.Write(p[:min(int64(len(p)), room)])
	}
	if l.keepTail && int64(len(p)) > room {
		if l.tail == nil {
			// The window so far is the end of what was kept.
			l.tail = appendWindow(make([]byte, 0, 64<<10), l.b.Bytes())
		}
		if room > 0 {
			p = p[room:]
		}
		l.tail = appendWindow(l.tail, p)
	}
	return n, nil
}
