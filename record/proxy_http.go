package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/httphop"
)

// chunkSize is the read size for streamed bodies. A read returns what has
// arrived, so a quiet stream's chunk is relayed at once, while a busy one is
// read, and written to the client, in pieces of up to this size: fewer system
// calls on both sides than one per upstream chunk.
const chunkSize = 256 << 10

var chunkPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// httpExchange records one HTTP exchange. Body chunks of the request may be
// recorded by the transport's goroutine while the response is relayed, so the
// counters are guarded.
type httpExchange struct {
	p  *Proxy
	id string

	mu        sync.Mutex
	recorded  [2]int64 // bytes recorded per direction (0: c2s, 1: s2c)
	truncated bool
	decodeErr string
	trailer   [2]http.Header // the trailers per direction, redacted
}

// newExchange starts the record of the next HTTP exchange.
func (p *Proxy) newExchange() *httpExchange {
	id := make([]byte, 0, 24)
	id = append(append(id, p.prefix...), 'h')
	return &httpExchange{p: p, id: string(strconv.AppendUint(id, p.httpIDs.Add(1), 10))}
}

func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if p.isClosed() {
		http.Error(w, "wireproof: the recording proxy is closed", http.StatusServiceUnavailable)
		return
	}
	ex := p.newExchange()
	// The events take the request's and the response's header maps as they
	// are, uncloned: nothing writes to them after (the upstream is sent a
	// clone, the client is written a copy, and redaction never writes into
	// the maps an event points to: it clones one it changes).
	ex.emit(&bundle.Event{Kind: bundle.KindHTTPRequest, Conn: ex.id, Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header})

	// An HTTP/1.0 client is sent no 1xx (RFC 9110 section 15.2); they are
	// still recorded.
	inf := &informational{w: w, ex: ex, send: r.ProtoAtLeast(1, 1)}
	out := r.Clone(httptrace.WithClientTrace(r.Context(), inf.trace()))
	out.URL = p.target(r)
	out.Host = ""
	out.RequestURI = ""
	httphop.Remove(out.Header)
	// Ask for identity encoding so the evidence holds readable (and
	// redactable) bodies rather than gzip; a client that offered gzip must
	// accept identity too.
	out.Header.Del("Accept-Encoding")
	// The client's trailers reach the upstream: the server fills r.Trailer
	// when the body has been read to its end, and the transport writes
	// out.Trailer after it, so both must be the same map.
	out.Trailer = r.Trailer
	// A body the upstream did not read to its end is closed at the end; a
	// request without one has no recorder (nil: close does nothing).
	var reqBody *bodyRecorder
	defer func() { reqBody.close(false) }()
	if r.Body != nil && r.Body != http.NoBody {
		// The transport reads the body while the response is relayed: by
		// default net/http's server, at the response's first write, reads
		// what is left of an unread body to the end and closes it (or, past
		// 256 KiB, closes the connection after the reply). An upload the
		// upstream answers before its end would reach the upstream cut, and
		// the transport's last read of the body (the check for its end) can
		// then fail, breaking the relayed answer. Full duplex leaves the
		// body to the transport. (HTTP/2 interleaves already: not
		// supported there, and not needed.)
		_ = http.NewResponseController(w).EnableFullDuplex()
		reqBody = newBodyRecorder(ex, bundle.DirClientToServer, r.Header)
		// Streamed as the transport reads it, whatever its length: a body
		// is recorded in the pieces redaction allows (a secret is never cut
		// between two), and an Expect: 100-continue client uploads only
		// once the upstream has asked for it.
		out.Body = &recordingBody{rec: reqBody, r: r.Body, done: func() { ex.setTrailer(0, r.Trailer) }}
	}

	res, err := p.transport.RoundTrip(out)
	inf.done()
	if err != nil {
		reqBody.close(false)
		ex.end(0, fmt.Errorf("upstream: %w", err))
		http.Error(w, "wireproof: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	ev := &bundle.Event{Kind: bundle.KindHTTPResponse, Conn: ex.id, Status: res.StatusCode, Header: res.Header}
	ev.Attrs = inf.attrs()
	ex.emit(ev)

	h := w.Header()
	clear(h) // the headers of a relayed 1xx
	for k, vs := range res.Header {
		h[k] = append(h[k][:0:0], vs...)
	}
	httphop.Remove(h)
	if len(res.Trailer) > 0 {
		names := make([]string, 0, len(res.Trailer))
		for k := range res.Trailer {
			names = append(names, k)
		}
		slices.Sort(names)
		h.Set("Trailer", strings.Join(names, ", "))
	}
	w.WriteHeader(res.StatusCode)

	var size int64
	if bodyAllowed(r.Method, res.StatusCode) {
		size, err = ex.relayBody(w, res)
	} else if ferr := http.NewResponseController(w).Flush(); ferr != nil && !errors.Is(ferr, http.ErrNotSupported) {
		// HEAD, 204 and 304 have no body, whatever their Content-Length
		// says: none is read, and the headers go out at once.
		err = fmt.Errorf("client: %w", ferr)
	}
	reqBody.close(false)
	for k, vs := range res.Trailer {
		h[http.TrailerPrefix+k] = vs
	}
	ex.setTrailer(1, res.Trailer)
	ex.end(size, err)
	if err != nil {
		// Abort so the client sees a broken response, not a complete one.
		panic(http.ErrAbortHandler)
	}
}

// bodyAllowed reports whether a response to method with status carries a
// body (RFC 9110 section 6.4.1): not a response to HEAD, nor a 1xx, 204 or
// 304.
func bodyAllowed(method string, status int) bool {
	return method != http.MethodHead && status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// informational relays the upstream's 1xx responses to the client as they
// arrive (100 Continue, 103 Early Hints, ...) and keeps them for the
// recorded http.response's attrs. The transport calls it on its own
// goroutine while the handler waits in RoundTrip; done ends it.
type informational struct {
	w    http.ResponseWriter
	ex   *httpExchange
	send bool // relay them to the client

	mu       sync.Mutex
	finished bool
	sent100  bool
	seen     []informationalResponse
}

type informationalResponse struct {
	Status int         `json:"status"`
	Header http.Header `json:"header,omitempty"`
}

func (in *informational) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		// A 100 Continue is relayed before the transport sends the body
		// (Got1xxResponse comes after), so the client's upload and the
		// server's own automatic 100 never race with it.
		Got100Continue: func() { in.relay(http.StatusContinue, nil) },
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			if code != http.StatusContinue {
				in.relay(code, http.Header(h))
			}
			return nil
		},
	}
}

func (in *informational) relay(code int, h http.Header) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.finished || code == http.StatusContinue && in.sent100 {
		return
	}
	in.sent100 = in.sent100 || code == http.StatusContinue
	in.seen = append(in.seen, informationalResponse{Status: code, Header: in.ex.p.rec.redactHTTPHeader(h.Clone())})
	if !in.send {
		return
	}
	wh := in.w.Header()
	for k, vs := range h {
		wh[k] = append(wh[k][:0:0], vs...)
	}
	in.w.WriteHeader(code)
	clear(wh) // a 1xx's headers are its own (WriteHeader keeps them)
}

func (in *informational) done() {
	in.mu.Lock()
	in.finished = true
	in.mu.Unlock()
}

// attrs returns {"informational":[...]} for the 1xx responses relayed, or
// nil.
func (in *informational) attrs() []byte {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.seen) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"informational": in.seen})
	return b
}

// relayBody streams the response body to the client, recording each chunk as
// it arrives before writing it, and flushes whenever nothing more has
// arrived, so a pause in the body reaches the client at once, as it would
// without the proxy. The headers go out with the first body bytes, or on
// their own when none has come within headerWait (an upstream that sent its
// headers and stalls).
func (ex *httpExchange) relayBody(w http.ResponseWriter, res *http.Response) (size int64, err error) {
	rb := newBodyRecorder(ex, bundle.DirServerToClient, res.Header)
	rc := http.NewResponseController(w)
	flush := func() error {
		if ferr := rc.Flush(); ferr != nil && !errors.Is(ferr, http.ErrNotSupported) {
			return fmt.Errorf("client: %w", ferr)
		}
		return nil
	}
	defer func() { rb.close(err == nil) }()
	if res.ContentLength >= 0 && res.ContentLength <= smallBody {
		return ex.relaySmall(w, res, rb, flush)
	}
	reads := readAhead(res.Body)
	defer reads.stop()
	// relay passes one read on and reports whether the body is over.
	relay := func(r aheadRead) (bool, error) {
		defer reads.free(r.buf)
		if r.n > 0 {
			b := (*r.buf)[:r.n]
			rb.write(b)
			if _, werr := w.Write(b); werr != nil {
				return true, fmt.Errorf("client: %w", werr)
			}
			size += int64(r.n)
		}
		switch {
		case r.err == io.EOF:
			return true, nil // the server flushes the end
		case r.err != nil:
			return true, upstreamBodyErr(res, r.err)
		case len(reads.c) == 0:
			// Nothing more has arrived: a busy body is flushed in
			// batches.
			return false, flush()
		}
		return false, nil
	}
	wait := time.NewTimer(headerWait)
	defer wait.Stop()
	select {
	case r, ok := <-reads.c:
		if !ok {
			return size, nil
		}
		if done, err := relay(r); done || err != nil {
			return size, err
		}
	case <-wait.C:
		if err := flush(); err != nil {
			return 0, err
		}
	}
	for r := range reads.c {
		if done, err := relay(r); done || err != nil {
			return size, err
		}
	}
	return size, nil
}

// smallBody is the largest body of known length relaySmall relays.
const smallBody = 64 << 10

// relaySmall is relayBody for a body of known length up to smallBody (an API
// answer): read, recorded and written on the handler's goroutine, as
// httputil.ReverseProxy copies a body, without the read-ahead goroutine and
// its hand-offs, which cost such a body more than the overlap they buy. The
// headers still go out on their own if no body bytes have come within
// headerWait, and what has been relayed is flushed when a read leaves the
// body unfinished (the rest has not arrived).
func (ex *httpExchange) relaySmall(w http.ResponseWriter, res *http.Response, rb *bodyRecorder, flush func() error) (size int64, err error) {
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	buf := (*bp)[:min(len(*bp), int(res.ContentLength)+1)] // +1: the read that finds the end
	var mu sync.Mutex
	started := false // the handler writes to w: the timer must not
	var headerErr error
	t := time.AfterFunc(headerWait, func() {
		mu.Lock()
		defer mu.Unlock()
		if !started {
			headerErr = flush()
		}
	})
	defer t.Stop()
	for {
		n, rerr := res.Body.Read(buf)
		if !started {
			mu.Lock()
			started = true
			mu.Unlock()
			t.Stop()
			if headerErr != nil {
				return 0, headerErr
			}
		}
		if n > 0 {
			rb.write(buf[:n])
			if _, werr := w.Write(buf[:n]); werr != nil {
				return size, fmt.Errorf("client: %w", werr)
			}
			size += int64(n)
		}
		switch {
		case rerr == io.EOF:
			return size, nil // the server flushes the end
		case rerr != nil:
			return size, upstreamBodyErr(res, rerr)
		case n > 0 && size < res.ContentLength:
			if err := flush(); err != nil {
				return size, err
			}
		}
	}
}

// headerWait is how long the headers of a response wait for its first body
// bytes to go out with them.
const headerWait = 20 * time.Millisecond

// readAheadDepth is how many chunks a streamed body is read ahead of the
// client: reading the upstream overlaps writing to the client.
const readAheadDepth = 2

// aheadRead is one read of a streamed body.
type aheadRead struct {
	buf *[]byte
	n   int
	err error
}

// reader reads a body on a goroutine of its own, ahead of the relay.
type reader struct {
	c    chan aheadRead
	body io.ReadCloser
	done chan struct{}
	exit chan struct{}
}

func readAhead(body io.ReadCloser) *reader {
	r := &reader{c: make(chan aheadRead, readAheadDepth), body: body, done: make(chan struct{}), exit: make(chan struct{})}
	go func() {
		defer close(r.exit)
		defer close(r.c)
		for {
			bp := chunkPool.Get().(*[]byte)
			n, err := body.Read(*bp)
			select {
			case r.c <- aheadRead{buf: bp, n: n, err: err}:
			case <-r.done:
				chunkPool.Put(bp)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *reader) free(bp *[]byte) { chunkPool.Put(bp) }

// stop ends the reading goroutine (closing the body if it is still being
// read) and waits for it.
func (r *reader) stop() {
	close(r.done)
	select {
	case <-r.exit:
	default:
		r.body.Close()
		<-r.exit
	}
	for a := range r.c {
		r.free(a.buf)
	}
}

// take reserves room under the body cap for n more recorded bytes in dir and
// returns how many of them may be recorded, marking the exchange truncated if
// that is fewer.
func (ex *httpExchange) take(dir bundle.Dir, n int64) int64 {
	i := 0
	if dir == bundle.DirServerToClient {
		i = 1
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	room := max(0, ex.p.rec.BodyCap()-ex.recorded[i])
	if n > room {
		ex.truncated = true
		n = room
	}
	ex.recorded[i] += n
	return n
}

// setDecodeErr notes that the body in dir could not be decoded; http.end
// says so in its attrs.
func (ex *httpExchange) setDecodeErr(dir bundle.Dir, coding string, err error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.decodeErr == "" {
		ex.decodeErr = fmt.Sprintf("%s: decoding %s: %v", dir, coding, err)
	}
}

// body records a whole body as one http.body event, up to the body cap.
func (ex *httpExchange) body(dir bundle.Dir, b []byte, owned bool) {
	ex.emitBody(dir, b[:ex.take(dir, int64(len(b)))], owned, nil)
}

// emitBody records one http.body event. owned says b is not reused by the
// caller, so it need not be copied for subscribers.
func (ex *httpExchange) emitBody(dir bundle.Dir, b []byte, owned bool, attrs []byte) {
	if len(b) == 0 {
		return
	}
	if !owned && ex.p.rec.Retains() {
		b = bytes.Clone(b)
	}
	ex.emit(&bundle.Event{Kind: bundle.KindHTTPBody, Conn: ex.id, Dir: dir, Body: bundle.Text(b), Attrs: attrs})
}

// setTrailer keeps the trailers of direction i (0: the request's, 1: the
// response's) for http.end.
func (ex *httpExchange) setTrailer(i int, h http.Header) {
	if len(h) == 0 {
		return
	}
	red := ex.p.rec.redactHTTPHeader(h.Clone())
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.trailer[i] = red
}

func (ex *httpExchange) end(size int64, err error) {
	ex.mu.Lock()
	ev := &bundle.Event{Kind: bundle.KindHTTPEnd, Conn: ex.id, Size: size, Truncated: ex.truncated}
	if ex.decodeErr != "" || ex.trailer[0] != nil || ex.trailer[1] != nil {
		attrs := map[string]any{}
		if ex.decodeErr != "" {
			attrs["decodeError"] = ex.decodeErr
		}
		if t := ex.trailer[0]; t != nil {
			attrs["requestTrailer"] = t
		}
		if t := ex.trailer[1]; t != nil {
			attrs["responseTrailer"] = t
		}
		ev.Attrs, _ = json.Marshal(attrs)
	}
	ex.mu.Unlock()
	if err != nil {
		ev.Err = err.Error()
	}
	ex.emit(ev)
}

// emit records ev. A recording that can no longer be written (closed, disk
// full) does not stop the relay: the traffic still flows, and the writer's
// error surfaces when the recording is closed.
func (ex *httpExchange) emit(ev *bundle.Event) { _, _ = ex.p.rec.Emit(ev) }

// recordingBody records a streamed request body as the transport reads it;
// done is called at its end (its trailers have arrived).
type recordingBody struct {
	rec  *bodyRecorder
	r    io.ReadCloser
	done func()
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.rec.write(p[:n])
	if err == io.EOF {
		b.rec.close(true)
		if b.done != nil {
			b.done()
			b.done = nil
		}
	}
	return n, err
}

func (b *recordingBody) Close() error { return b.r.Close() }

// upstreamBodyErr names why reading the upstream's body failed. When the
// client's connection closed first, the read fails only because the
// client's request context (which the upstream request carries) was
// cancelled, and the transport closed the upstream connection: the error
// is context.Canceled or, as the race goes, "use of closed network
// connection". The client hung up (Codex once it has response.completed,
// a CLI whose turn was interrupted or that was killed mid-answer), and the
// record says so instead of blaming the upstream.
func upstreamBodyErr(res *http.Response, err error) error {
	if res.Request != nil && res.Request.Context().Err() != nil {
		return fmt.Errorf("client: gone before the body ended (%w)", err) // protocol.ClientGonePrefix
	}
	return fmt.Errorf("upstream body: %w", err)
}
