package record

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/redact"
)

// DefaultBodyCap is the default number of bytes recorded per HTTP body.
const DefaultBodyCap = 16 << 20

// Options configures a Recorder. A nil *Options means defaults.
type Options struct {
	// Redact lists secret strings replaced by "[REDACTED]" wherever they occur
	// in an event: URLs, header values, bodies, messages, log lines.
	Redact []string
	// TokenFields names the query parameters, form fields, JSON fields and
	// log-line keys whose values are credentials: each value is learned as a
	// secret (then redacted wherever it occurs, in any spelling) and replaced
	// where it stands. Names match whole identifiers, case-insensitively.
	// Nil means redact.DefaultTokenFields; a protocol supplies its own names
	// (verify supplies t3.TokenFields).
	TokenFields []string
	// BodyCap is the maximum number of bytes recorded per HTTP body (default
	// DefaultBodyCap). Bytes past it are relayed but not recorded, and the
	// exchange's http.end is marked Truncated.
	BodyCap int64
	// File is the path of the bundle the Writer writes (bundle.Create's).
	// When it is set, Close keeps the secrets learned during the recording
	// out of what was written before they were learned: the header (the
	// manifest, the recorded command's argv) and every event written before
	// the last secret was learned are redacted again with every secret, and
	// if that changes anything the file is rewritten in place (see
	// docs/redaction.md). A bundle cut short by kill -9 is not rewritten.
	File string
}

// ErrClosed is returned by Emit after Close.
var ErrClosed = errors.New("record: recorder is closed")

// Subscriber receives every recorded event, in sequence order, on a goroutine
// of its own. An event handed to Event must not be modified, and its Body bytes
// must not be retained past the call unless they are only read. Returning an
// error (or panicking) cuts the subscriber off: it receives no more events and
// the failure is reported by SubscriberErrors and Close.
type Subscriber interface {
	Event(ev *bundle.Event) error
}

// SubscriberFunc adapts a function to a Subscriber.
type SubscriberFunc func(ev *bundle.Event) error

// Event calls f(ev).
func (f SubscriberFunc) Event(ev *bundle.Event) error { return f(ev) }

// SubscriberError reports a subscriber that was cut off.
type SubscriberError struct {
	Name  string // the name given to Subscribe
	Seq   uint64 // the event it failed on
	Err   error  // what it returned, or nil if it panicked
	Panic any    // the recovered panic value, or nil
}

func (e *SubscriberError) Error() string {
	if e.Panic != nil {
		return fmt.Sprintf("subscriber %q panicked at seq %d: %v", e.Name, e.Seq, e.Panic)
	}
	return fmt.Sprintf("subscriber %q failed at seq %d: %v", e.Name, e.Seq, e.Err)
}

func (e *SubscriberError) Unwrap() error { return e.Err }

// Recorder is the single ordered sink of a recording: it redacts events,
// appends them to the bundle writer and fans them out to subscribers.
//
// All methods are safe for concurrent use. Emit calls from different goroutines
// are serialised: the bundle order is the order in which Emit took its lock, and
// every subscriber sees exactly that order.
type Recorder struct {
	w       *bundle.Writer
	red     *redact.Redactor
	bodyCap int64

	mu     sync.Mutex // orders Emit; guards everything below
	closed bool
	seq    uint64    // last seq handed out when there is no writer
	start  time.Time // clock origin when there is no writer
	lastT  int64     // last t handed out when there is no writer
	subs   []*subscription
	// pending holds the places taken by Reserve (and the events of Emit
	// calls behind them) that are not written yet, in order.
	pending []*Reservation

	retain atomic.Bool // some subscriber may hold events after Emit returns
	// wsText is set once a WebSocket text message was recorded: Close then
	// joins the texts streamed in pieces over WebSocket (joinWSDeltas). A
	// test of the message's bytes here would be on the relay's path: three
	// substring searches cost 1.2 µs per 1 KiB message.
	wsText atomic.Bool

	file    string      // Options.File
	initial *redact.Set // the secrets given at the start
	lastSet *redact.Set // the secrets the last event written was redacted with
	setFrom uint64      // the first seq surely redacted with lastSet: the events before it are redacted again at Close

	errMu sync.Mutex
	errs  []error
}

// New returns a Recorder writing to w. A nil w records to subscribers only (the
// Recorder then assigns Seq and T itself, starting at seq 1 as if a header had
// been written); that is for tests and tools that do not keep a file.
func New(w *bundle.Writer, opts *Options) *Recorder {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BodyCap <= 0 {
		o.BodyCap = DefaultBodyCap
	}
	r := &Recorder{w: w, red: redact.New(o.Redact, o.TokenFields), bodyCap: o.BodyCap, start: time.Now(), file: o.File}
	r.initial = r.red.Snapshot()
	r.lastSet, r.setFrom = r.initial, 1
	return r
}

// BodyCap reports the number of bytes recorded per HTTP body.
func (r *Recorder) BodyCap() int64 { return r.bodyCap }

// AddSecret adds a secret learned at runtime (a bootstrap token, an access
// token): every later occurrence in any event is replaced by "[REDACTED]".
func (r *Recorder) AddSecret(s string) { r.red.Add(s) }

// Redact returns s with every secret known so far replaced, for text a caller
// writes somewhere other than the bundle (a report, a log line on stderr).
func (r *Recorder) Redact(s string) string {
	return r.red.String(s, r.red.Snapshot())
}

// Emit redacts ev, appends it to the bundle (which assigns ev.Seq and ev.T) and
// queues it to every subscriber, and returns its seq. ev must not be used by
// the caller afterwards: it is owned by the recording. Its Body bytes are not
// modified (redaction makes new slices), so a caller may relay the same bytes
// it recorded; but it must not change them after Emit if any subscriber may
// still read them (see Retains).
//
// Redaction and encoding happen before Emit takes its lock, so concurrent
// callers do them in parallel; under the lock only the writer's numbering
// and the queueing to subscribers remain. If places taken earlier with
// Reserve are still waiting for their events, Emit takes the next place and
// returns once the events before it are written.
func (r *Recorder) Emit(ev *bundle.Event) (uint64, error) {
	set, enc, err := r.prepare(ev)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		if enc != nil {
			enc.Release()
		}
		return 0, ErrClosed
	}
	if len(r.pending) == 0 {
		defer r.mu.Unlock()
		return r.appendLocked(ev, enc, set, -1)
	}
	res := &Reservation{r: r, t: r.nowLocked(), state: resFilled, ev: ev, enc: enc, set: set, done: make(chan struct{})}
	r.pending = append(r.pending, res)
	r.mu.Unlock()
	<-res.done
	return res.seq, res.err
}

// emitNoWait is Emit for a caller that must not wait for the places taken
// before it (the WebSocket relay, which records a message on its own
// goroutine before it passes the message on): ev is redacted and encoded,
// then takes the next place at once. If no place before it is still
// waiting for its event it is written there and then, and written reports
// true: unless Retains, nothing of the recording refers to ev or its body
// any more, so the caller may reuse both. Otherwise it waits in its place,
// owned by the recording as with Emit. A writer's error is not returned:
// it surfaces at Close, as the relay's recordings always have.
func (r *Recorder) emitNoWait(ev *bundle.Event) (written bool) {
	set, enc, err := r.prepare(ev)
	if err != nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		if enc != nil {
			enc.Release()
		}
		return false
	}
	if len(r.pending) == 0 {
		_, _ = r.appendLocked(ev, enc, set, -1)
		return true
	}
	r.pending = append(r.pending, &Reservation{r: r, t: r.nowLocked(), state: resFilled, ev: ev, enc: enc, set: set})
	return false
}

// prepare redacts ev with the secrets known now and encodes it for the
// writer; both need no lock.
func (r *Recorder) prepare(ev *bundle.Event) (*redact.Set, *bundle.Encoded, error) {
	if ev.Truncated && ev.Kind == bundle.KindWSMessage {
		// A message cut at the recording limit: as at the body cap, the
		// tail that may begin a secret or a token field, whose end is not
		// recorded, is dropped (a Stream cut short).
		ev.Body.Data = redact.NewStream(r.red).Next(ev.Body.Data)
	}
	set := r.red.Snapshot()
	r.red.Event(ev, set)
	if ev.Kind == bundle.KindWSMessage && !ev.Body.Binary && !r.wsText.Load() {
		r.wsText.Store(true)
	}
	if r.w == nil {
		return set, nil, nil
	}
	enc, err := bundle.Encode(ev)
	return set, enc, err
}

// appendLocked appends a prepared event at time t (now if t < 0) and queues
// it to the subscribers. r.mu is held.
func (r *Recorder) appendLocked(ev *bundle.Event, enc *bundle.Encoded, set *redact.Set, t int64) (uint64, error) {
	if now := r.red.Snapshot(); now != set {
		// A secret was learned by a concurrent Emit after our snapshot; it may
		// already be in the bundle before us, so it must not leak in this event.
		r.red.Event(ev, now)
		if enc != nil {
			enc.Release()
			var err error
			if enc, err = bundle.Encode(ev); err != nil {
				return 0, err
			}
		}
	}
	if r.w != nil {
		var seq uint64
		var err error
		if t < 0 {
			seq, err = r.w.AppendEncoded(enc)
		} else {
			seq, err = r.w.AppendEncodedAt(enc, t)
		}
		if err != nil {
			return seq, err
		}
		if now := r.red.Snapshot(); now != r.lastSet {
			// Learned with this event (or beside it): the events up to it
			// may hold what is a secret now.
			r.lastSet, r.setFrom = now, seq+1
		}
	} else {
		r.seq++
		ev.Seq = r.seq
		if t < 0 {
			t = int64(time.Since(r.start))
		}
		ev.T = max(t, r.lastT)
		r.lastT = ev.T
	}
	for _, s := range r.subs {
		s.push(ev)
	}
	return ev.Seq, nil
}

// nowLocked reads the recording's clock. r.mu is held.
func (r *Recorder) nowLocked() int64 {
	if r.w != nil {
		return r.w.Now()
	}
	return int64(time.Since(r.start))
}

// Reservation is a place in the recording's order taken when something
// happens, for an event that is built, redacted and encoded later: the
// WebSocket relay takes one for each message before it passes the message on
// (so nothing caused by the message can be recorded before it) and fills it
// from a goroutine of its own, off the relay's path. Events after an unfilled
// place wait for it, so every Reservation must be filled with Emit or given up
// with Cancel.
type Reservation struct {
	r     *Recorder
	t     int64 // when the place was taken
	state int
	ev    *bundle.Event
	enc   *bundle.Encoded
	set   *redact.Set
	done  chan struct{} // closed once written, for a waiting Recorder.Emit
	seq   uint64
	err   error
}

const (
	resWaiting = iota
	resFilled
	resCancelled
)

// Reserve takes the next place in the recording's order, at the current time.
// After Close it returns a place whose Emit reports ErrClosed.
func (r *Recorder) Reserve() *Reservation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return &Reservation{r: r, state: resCancelled}
	}
	res := &Reservation{r: r, t: r.nowLocked()}
	r.pending = append(r.pending, res)
	return res
}

// Emit fills the place with ev, which takes the place's seq and time: it is
// redacted and encoded on the caller's goroutine, and written with the events
// after it as soon as every place before it is filled. ev is owned by the
// recording afterwards, as with Recorder.Emit. The error is the writer's, if
// the event was written at once.
func (res *Reservation) Emit(ev *bundle.Event) error {
	r := res.r
	r.mu.Lock()
	cancelled := res.state != resWaiting
	r.mu.Unlock()
	if cancelled {
		return ErrClosed
	}
	set, enc, err := r.prepare(ev)
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.state != resWaiting { // the recorder closed meanwhile
		if enc != nil {
			enc.Release()
		}
		return ErrClosed
	}
	if err != nil {
		res.state = resCancelled
		r.drainLocked()
		return err
	}
	res.ev, res.enc, res.set, res.state = ev, enc, set, resFilled
	r.drainLocked()
	return res.err
}

// EmitWritten is Emit, and then waits until the event is in the bundle:
// every place before it filled, the event written and the writer's
// compression of it done (as flush). Then, unless Retains, nothing of the
// recording refers to ev's body any more, and its bytes may be reused (the
// bundle writer takes a huge JSON body as it is, without a copy). That
// holds whatever the error: an event the recording could not take (closed,
// failed) was dropped unread by the time it returns.
func (res *Reservation) EmitWritten(ev *bundle.Event) error {
	r := res.r
	r.mu.Lock()
	if res.state == resWaiting && res.done == nil {
		res.done = make(chan struct{})
	}
	done := res.done
	r.mu.Unlock()
	if err := res.Emit(ev); err != nil {
		return err
	}
	if done != nil {
		<-done
	}
	if err := res.err; err != nil {
		return err
	}
	return r.flush()
}

// Settled waits until every place taken before the call (Reserve) has been
// filled and written or given up, and returns the seq of the last event
// written then. The driver calls it before acting on what a peer sent it:
// the relay took the message's place before passing it on, so afterwards
// the recording, and every subscriber's queue, holds it.
func (r *Recorder) Settled() uint64 {
	r.mu.Lock()
	var done chan struct{}
	if n := len(r.pending); n > 0 {
		last := r.pending[n-1]
		if last.done == nil {
			last.done = make(chan struct{})
		}
		done = last.done
	}
	r.mu.Unlock()
	if done != nil {
		<-done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		return r.w.Count() // the header is seq 0, the events 1..Count
	}
	return r.seq
}

// Cancel gives the place up: nothing is recorded in it.
func (res *Reservation) Cancel() {
	r := res.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.state == resWaiting {
		res.state = resCancelled
		r.drainLocked()
	}
}

// drainLocked writes the filled places at the head of the queue, in order.
// r.mu is held.
func (r *Recorder) drainLocked() {
	for len(r.pending) > 0 {
		h := r.pending[0]
		if h.state == resWaiting {
			return
		}
		r.pending[0] = nil
		r.pending = r.pending[1:]
		if len(r.pending) == 0 {
			r.pending = nil
		}
		if h.state == resFilled {
			h.seq, h.err = r.appendLocked(h.ev, h.enc, h.set, h.t)
			h.ev, h.enc = nil, nil
		}
		if h.done != nil {
			close(h.done)
		}
	}
}

// flush waits until every event written so far is compressed and written
// out; the WebSocket relay uses it after a huge message, so the next one is
// not held in memory while the writer still holds this one.
func (r *Recorder) flush() error {
	if r.w == nil {
		return nil
	}
	return r.w.Flush()
}

// Retains reports whether events may be read by a subscriber after Emit returns.
// When it is false the caller may reuse a buffer it passed as an event body as
// soon as Emit returns, which spares a copy on the proxy's hot path.
func (r *Recorder) Retains() bool { return r.retain.Load() }

// Subscribe adds a subscriber that receives every event emitted from now on.
// name identifies it in errors.
func (r *Recorder) Subscribe(name string, s Subscriber) {
	sub := &subscription{name: name, s: s, wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.retain.Store(true)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		close(sub.done)
		return
	}
	r.subs = append(r.subs, sub)
	r.mu.Unlock()
	go sub.run(r)
}

// SubscriberErrors returns a *SubscriberError for every subscriber cut off so
// far, ordered by the seq of the event each failed at (subscribers run on
// goroutines of their own, so the order in time is not the order of events).
func (r *Recorder) SubscriberErrors() []error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return append([]error(nil), r.errs...)
}

func (r *Recorder) addErr(err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	at := len(r.errs)
	if se := (*SubscriberError)(nil); errors.As(err, &se) {
		for at > 0 {
			var prev *SubscriberError
			if !errors.As(r.errs[at-1], &prev) || prev.Seq <= se.Seq {
				break
			}
			at--
		}
	}
	r.errs = slices.Insert(r.errs, at, err)
}

// Close stops accepting events, waits until every subscriber has received every
// event queued to it, and closes the writer. It returns the writer's error
// joined with a *SubscriberError for every subscriber that was cut off. Close
// is idempotent; later calls return nil.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	// A place never filled would hold back the events behind it: they are
	// written without it.
	for _, res := range r.pending {
		if res.state == resWaiting {
			res.state = resCancelled
		}
	}
	r.drainLocked()
	r.closed = true
	subs := r.subs
	r.mu.Unlock()

	for _, s := range subs {
		s.close()
	}
	for _, s := range subs {
		<-s.done
	}
	var errs []error
	if r.w != nil {
		if err := r.w.Close(); err != nil {
			errs = append(errs, fmt.Errorf("record: closing the bundle: %w", err))
		} else if r.file != "" {
			if err := r.redactWritten(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, r.SubscriberErrors()...)
	return errors.Join(errs...)
}

// subscription is one subscriber's unbounded queue and goroutine. The queue is
// unbounded so a slow subscriber never slows the recording down; it only costs
// memory until it catches up.
type subscription struct {
	name string
	s    Subscriber

	mu      sync.Mutex
	queue   []*bundle.Event
	cut     bool
	closing bool
	wake    chan struct{}
	done    chan struct{}
}

func (s *subscription) push(ev *bundle.Event) {
	s.mu.Lock()
	if !s.cut {
		s.queue = append(s.queue, ev)
	}
	s.mu.Unlock()
	s.signal()
}

func (s *subscription) close() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.signal()
}

func (s *subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscription) run(r *Recorder) {
	defer close(s.done)
	var batch []*bundle.Event
	for {
		s.mu.Lock()
		batch, s.queue = s.queue, batch[:0]
		closing := s.closing
		s.mu.Unlock()
		for i, ev := range batch {
			if err := s.deliver(ev); err != nil {
				r.addErr(err)
				s.mu.Lock()
				s.cut = true
				s.queue = nil
				s.mu.Unlock()
				clear(batch[i:])
				return
			}
		}
		clear(batch)
		if closing && len(batch) == 0 {
			return
		}
		if len(batch) == 0 {
			<-s.wake
		}
	}
}

// deliver calls the subscriber, turning a panic into a *SubscriberError.
func (s *subscription) deliver(ev *bundle.Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &SubscriberError{Name: s.name, Seq: ev.Seq, Panic: p}
		}
	}()
	if e := s.s.Event(ev); e != nil {
		return &SubscriberError{Name: s.name, Seq: ev.Seq, Err: e}
	}
	return nil
}
