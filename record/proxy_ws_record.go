package record

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/wireproof/wireproof/bundle"
)

// wsQueueMax bounds the message bytes a connection's relay may have handed
// to its recording and not yet seen written: past it, the relay waits before
// it holds more, so a recording that falls behind slows the connection down
// instead of growing memory.
const wsQueueMax = 8 << 20

// wsSettle is the message size from which the recording of a message waits
// until the bundle writer has compressed the one before, and gives the memory
// of a message back as soon as it is encoded, before the relay may take the
// next: a run of 64 MiB messages then holds one message and one encoded line
// at a time (about twice the message), not four or more.
const wsSettle = 4 << 20

// wsItem is one event of a relayed connection waiting to be recorded in the
// place the relay took for it.
type wsItem struct {
	res     *Reservation
	ev      *bundle.Event
	held    int64
	inflate bool
}

// wsQueue hands a connection's events from its two relay directions to the
// goroutine that records them, in the order their places were taken.
type wsQueue struct {
	rl       *wsRelay
	inflate  [2]*wsInflater // by direction: c2s, s2c
	mu       sync.Mutex
	room     sync.Cond // held went down
	items    []wsItem
	held     int64
	closed   bool
	wake     chan struct{}
	spare    []wsItem
	settling bool
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
	q.held += it.held
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// waitRoom waits while the recording holds more than wsQueueMax bytes.
func (q *wsQueue) waitRoom() {
	q.mu.Lock()
	for q.held > wsQueueMax && !q.closed {
		q.room.Wait()
	}
	q.mu.Unlock()
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
	for {
		q.mu.Lock()
		batch := q.items
		q.items = q.spare[:0]
		closed := q.closed
		q.mu.Unlock()
		for i := range batch {
			it := &batch[i]
			if it.inflate {
				q.inflate[dirIndex(it.ev.Dir)].message(it.ev, q.rl.p.maxMsg)
			}
			held := it.held
			if held >= wsSettle {
				// Wait until the line of the last huge message is compressed
				// and give its memory back before encoding this one.
				_ = rec.flush()
				debug.FreeOSMemory()
			}
			_ = it.res.Emit(it.ev)
			*it = wsItem{}
			if held >= wsSettle {
				// This message is encoded and its line is with the writer:
				// give the message's memory back now, before the relay may
				// take the next one.
				debug.FreeOSMemory()
			}
			if held > 0 {
				q.mu.Lock()
				q.held -= held
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
func (in *wsInflater) message(ev *bundle.Event, limit int64) {
	if in.broken != "" {
		ev.Err = in.broken
		return
	}
	if ev.Truncated {
		// The compressed bytes were cut at the limit: they cannot be
		// decompressed, nor anything that refers back to them.
		ev.Err = "compressed message larger than the recording limit: recorded compressed and cut"
		if in.takeover {
			in.broken = "cannot decompress: an earlier message this one may refer to was too large to record"
		}
		return
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
		return
	}
	var out bytes.Buffer
	out.Grow(min(4*len(ev.Body.Data)+64, int(limit)))
	n, err := io.Copy(&limitedBuffer{b: &out, limit: limit}, in.fr)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		in.broken = "cannot decompress: " + err.Error()
		ev.Err = in.broken
		return
	}
	data := out.Bytes()
	if n > int64(len(data)) {
		ev.Truncated, ev.Size = true, n
	}
	if in.takeover {
		if ev.Truncated {
			// The window the next message may refer to was not kept.
			in.broken = "cannot decompress: an earlier message decompressed to more than the recording limit"
		}
		in.window = appendWindow(in.window, data)
	}
	ev.Body.Data = data
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

// limitedBuffer keeps the first limit bytes written and counts the rest.
type limitedBuffer struct {
	b     *bytes.Buffer
	limit int64
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.limit - int64(l.b.Len()); room > 0 {
		l.b.Write(p[:min(int64(len(p)), room)])
	}
	return len(p), nil
}
