package record

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/wireproof/wireproof/bundle"
)

// heldQueue is how many arrived requests Requests buffers before the gate's
// handlers wait for the controller to take them.
const heldQueue = 64

// GateOptions configures a Gate. A nil *GateOptions means defaults.
type GateOptions struct {
	Name string // conn id, default "gate"
	Addr string // default "127.0.0.1:0"

	// Hold lists the paths whose requests are held and handed to the
	// controller through Requests. A request for any other path is answered
	// 404 at once (and recorded). Nil holds every request.
	Hold []string
}

// Errors of HeldRequest.Release.
var (
	// ErrReleased: the request was already released.
	ErrReleased = errors.New("record: gate request already released")
	// ErrClientGone: the client went away before the release; nothing was
	// answered. The release is still recorded, with this error.
	ErrClientGone = errors.New("record: gate client went away before the release")
	// ErrGateClosed: the gate was closed, which aborted the request.
	ErrGateClosed = errors.New("record: gate closed")
)

// Gate is a controllable local dependency: a loopback HTTP server whose
// requests are recorded (gate.request) and held until the controller releases
// them (gate.release, then the answer). The live driver decides when; the gate
// only holds, records and answers.
//
// Methods of Gate and of HeldRequest are safe for concurrent use.
type Gate struct {
	em   Emitter
	name string
	hold []string
	ln   net.Listener
	srv  *http.Server
	reqs chan *HeldRequest

	closing   chan struct{}
	closeOnce sync.Once
	closeErr  error
	handlers  sync.WaitGroup
	served    chan struct{}

	mu      sync.Mutex
	emitErr error
}

// StartGate listens on opts.Addr and serves until Close. ctx bounds the
// listen only.
func StartGate(ctx context.Context, em Emitter, opts *GateOptions) (*Gate, error) {
	if em == nil {
		return nil, errors.New("record: StartGate needs an Emitter")
	}
	if opts == nil {
		opts = &GateOptions{}
	}
	addr := cmp.Or(opts.Addr, "127.0.0.1:0")
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("record: gate listening on %s: %w", addr, err)
	}
	g := &Gate{
		em:      em,
		name:    cmp.Or(opts.Name, "gate"),
		hold:    slices.Clone(opts.Hold),
		ln:      ln,
		reqs:    make(chan *HeldRequest, heldQueue),
		closing: make(chan struct{}),
		served:  make(chan struct{}),
	}
	g.srv = &http.Server{Handler: http.HandlerFunc(g.serve), ReadHeaderTimeout: time.Minute}
	go func() {
		defer close(g.served)
		g.srv.Serve(ln)
	}()
	return g, nil
}

// URL returns the gate's base URL, "http://127.0.0.1:PORT".
func (g *Gate) URL() string { return "http://" + g.ln.Addr().String() }

// Requests delivers each held request, after its gate.request event, in the
// order they arrived. It is never closed: select on it together with your
// own end condition.
func (g *Gate) Requests() <-chan *HeldRequest { return g.reqs }

// Close stops the gate. It releases nothing: held requests are aborted (their
// clients see the connection close), and no gate.release is recorded for
// them. It returns once every handler has returned, with the first error the
// Emitter reported, since evidence was then lost. Close is idempotent.
func (g *Gate) Close() error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		close(g.closing) // under mu: no handler is counted in after this
		g.mu.Unlock()
		g.srv.Close() // closes the listener and every connection
		<-g.served
		g.handlers.Wait()
		g.mu.Lock()
		g.closeErr = g.emitErr
		g.mu.Unlock()
	})
	return g.closeErr
}

// HeldRequest is one request the gate holds. Answer it with Release.
type HeldRequest struct {
	Method string
	Path   string      // the URL path, as the policy matches it
	URL    string      // the request URI (path and query) as sent
	Header http.Header // do not modify

	g        *Gate
	answer   chan answer // to the handler, at most once
	written  chan error  // the handler's result of writing the answer
	gone     chan struct{}
	mu       sync.Mutex
	answered bool // Release was called
	ended    bool // the handler stopped waiting: client gone or gate closed
	endErr   error
}

type answer struct {
	status int
	body   []byte
}

// Gone is closed when the client went away, or the gate closed, before the
// request was released.
func (h *HeldRequest) Gone() <-chan struct{} { return h.gone }

// Release records gate.release and then answers the request with status and
// body. It returns once the answer is written, or ErrReleased on a second
// call, ErrClientGone or ErrGateClosed when nobody waits for the answer any
// more, or the error writing the answer.
func (h *HeldRequest) Release(status int, body []byte) error {
	if status < 100 || status > 999 {
		return fmt.Errorf("record: gate release of %s with status %d: want a three-digit HTTP status", h.URL, status)
	}
	h.mu.Lock()
	if h.answered {
		h.mu.Unlock()
		return ErrReleased
	}
	h.answered = true
	ended, endErr := h.ended, h.endErr
	h.mu.Unlock()

	ev := &bundle.Event{Kind: bundle.KindGateRelease, Conn: h.g.name, URL: h.URL, Status: status,
		Body: bundle.Text(slices.Clone(body))}
	if ended {
		ev.Err = endErr.Error()
		h.g.emit(ev)
		return endErr
	}
	h.g.emit(ev)
	h.answer <- answer{status, body}
	return <-h.written
}

// serve records a request and holds it until it is released, its client goes
// away or the gate closes.
func (g *Gate) serve(w http.ResponseWriter, r *http.Request) {
	if !g.enter() {
		return // closing: the connection is being closed under us
	}
	defer g.handlers.Done()
	h := &HeldRequest{
		Method:  r.Method,
		Path:    r.URL.Path,
		URL:     r.URL.RequestURI(),
		Header:  r.Header.Clone(),
		g:       g,
		answer:  make(chan answer, 1),
		written: make(chan error, 1),
		gone:    make(chan struct{}),
	}
	g.emit(&bundle.Event{Kind: bundle.KindGateRequest, Conn: g.name, Method: h.Method, URL: h.URL, Header: h.Header})
	if g.hold != nil && !slices.Contains(g.hold, h.Path) {
		g.emit(&bundle.Event{Kind: bundle.KindGateRelease, Conn: g.name, URL: h.URL, Status: http.StatusNotFound})
		w.WriteHeader(http.StatusNotFound)
		return
	}

	select {
	case g.reqs <- h:
	case <-r.Context().Done():
		h.end(g.whyEnded())
		panic(http.ErrAbortHandler)
	case <-g.closing:
		h.end(ErrGateClosed)
		panic(http.ErrAbortHandler)
	}

	var a answer
	select {
	case a = <-h.answer:
	case <-r.Context().Done():
		if h.end(g.whyEnded()) {
			panic(http.ErrAbortHandler) // no answer at all, not an empty 200
		}
		a = <-h.answer // Release won the race and is answering
	case <-g.closing:
		if h.end(ErrGateClosed) {
			panic(http.ErrAbortHandler)
		}
		a = <-h.answer
	}
	w.WriteHeader(a.status)
	_, err := w.Write(a.body)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	h.written <- err
}

// enter counts a handler in, unless the gate is closing.
func (g *Gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.closing:
		return false
	default:
	}
	g.handlers.Add(1)
	return true
}

// whyEnded tells a client that went away from one cut off by Close.
func (g *Gate) whyEnded() error {
	select {
	case <-g.closing:
		return ErrGateClosed
	default:
		return ErrClientGone
	}
}

// end marks the request as no longer waited for, unless a Release already
// took it; it reports whether it did.
func (h *HeldRequest) end(err error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.answered {
		return false
	}
	h.ended, h.endErr = true, err
	close(h.gone)
	return true
}

func (g *Gate) emit(ev *bundle.Event) {
	if _, err := g.em.Emit(ev); err != nil {
		g.mu.Lock()
		if g.emitErr == nil {
			g.emitErr = fmt.Errorf("record: emitting %s of %q: %w", ev.Kind, g.name, err)
		}
		g.mu.Unlock()
	}
}
