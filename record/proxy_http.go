package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/httphop"
)

// wholeBodyMax is the largest body with a known length that is read whole
// and recorded as one chunk. Such bodies (token responses, projection
// snapshots) arrive at once anyway; one chunk keeps a credential field from
// being split across two events, where redaction could not see it whole.
const wholeBodyMax = 1 << 20

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
}

func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if p.isClosed() {
		http.Error(w, "wireproof: the recording proxy is closed", http.StatusServiceUnavailable)
		return
	}
	ex := &httpExchange{p: p, id: p.prefix + "h" + strconv.FormatUint(p.httpIDs.Add(1), 10)}
	ex.emit(&bundle.Event{Kind: bundle.KindHTTPRequest, Conn: ex.id, Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone()})

	out := r.Clone(r.Context())
	out.URL = p.target(r)
	out.Host = ""
	out.RequestURI = ""
	httphop.Remove(out.Header)
	// Ask for identity encoding so the evidence holds readable (and
	// redactable) bodies rather than gzip; a client that offered gzip must
	// accept identity too.
	out.Header.Del("Accept-Encoding")
	reqBody := newBodyRecorder(ex, bundle.DirClientToServer, r.Header)
	defer reqBody.close(false) // a body the upstream did not read to its end
	if r.Body != nil && r.Body != http.NoBody {
		if r.ContentLength >= 0 && r.ContentLength <= wholeBodyMax {
			b, err := io.ReadAll(io.LimitReader(r.Body, r.ContentLength))
			if err != nil {
				ex.end(0, fmt.Errorf("reading the request body: %w", err))
				http.Error(w, "wireproof: reading the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			reqBody.whole(b)
			out.Body = io.NopCloser(bytes.NewReader(b))
			out.ContentLength = int64(len(b))
		} else {
			out.Body = &recordingBody{rec: reqBody, r: r.Body}
		}
	}

	res, err := p.transport.RoundTrip(out)
	if err != nil {
		reqBody.close(false)
		ex.end(0, fmt.Errorf("upstream: %w", err))
		http.Error(w, "wireproof: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	ex.emit(&bundle.Event{Kind: bundle.KindHTTPResponse, Conn: ex.id, Status: res.StatusCode, Header: res.Header.Clone()})

	h := w.Header()
	for k, vs := range res.Header {
		h[k] = append(h[k][:0:0], vs...)
	}
	httphop.Remove(h)
	if len(res.Trailer) > 0 {
		names := make([]string, 0, len(res.Trailer))
		for k := range res.Trailer {
			names = append(names, k)
		}
		h.Set("Trailer", strings.Join(names, ", "))
	}
	w.WriteHeader(res.StatusCode)

	size, err := ex.relayBody(w, res)
	reqBody.close(false)
	for k, vs := range res.Trailer {
		h[http.TrailerPrefix+k] = vs
	}
	ex.end(size, err)
	if err != nil {
		// Abort so the client sees a broken response, not a complete one.
		panic(http.ErrAbortHandler)
	}
}

// relayBody streams the response body to the client, recording each chunk as
// it arrives before writing it, and flushes after each chunk of a streamed
// response (unknown length, or server-sent events) so nothing is held back.
func (ex *httpExchange) relayBody(w http.ResponseWriter, res *http.Response) (size int64, err error) {
	rb := newBodyRecorder(ex, bundle.DirServerToClient, res.Header)
	if res.ContentLength > 0 && res.ContentLength <= wholeBodyMax && !isEventStream(res.Header) {
		b := make([]byte, res.ContentLength)
		n, err := io.ReadFull(res.Body, b)
		rb.whole(b[:n])
		if _, werr := w.Write(b[:n]); werr != nil {
			return 0, fmt.Errorf("client: %w", werr)
		}
		if err != nil {
			return int64(n), fmt.Errorf("upstream body: %w", err)
		}
		return int64(n), nil
	}
	stream := res.ContentLength < 0 || isEventStream(res.Header)
	rc := http.NewResponseController(w)
	defer func() { rb.close(err == nil) }()
	reads := readAhead(res.Body)
	defer reads.stop()
	for r := range reads.c {
		if r.n > 0 {
			b := (*r.buf)[:r.n]
			rb.write(b)
			if _, werr := w.Write(b); werr != nil {
				reads.free(r.buf)
				return size, fmt.Errorf("client: %w", werr)
			}
			size += int64(r.n)
		}
		reads.free(r.buf)
		// Flush when nothing more has arrived: a pause in the stream reaches
		// the client at once, while a busy stream is flushed in batches.
		if stream && len(reads.c) == 0 {
			if ferr := rc.Flush(); ferr != nil && !errors.Is(ferr, http.ErrNotSupported) {
				return size, fmt.Errorf("client: %w", ferr)
			}
		}
		if r.err == io.EOF {
			return size, nil
		}
		if r.err != nil {
			return size, fmt.Errorf("upstream body: %w", r.err)
		}
	}
	return size, nil
}

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

func isEventStream(h http.Header) bool {
	ct := h.Get("Content-Type")
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "text/event-stream")
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

func (ex *httpExchange) end(size int64, err error) {
	ex.mu.Lock()
	ev := &bundle.Event{Kind: bundle.KindHTTPEnd, Conn: ex.id, Size: size, Truncated: ex.truncated}
	if ex.decodeErr != "" {
		ev.Attrs = jsonAttr("decodeError", ex.decodeErr)
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

// recordingBody records a streamed request body as the transport reads it.
type recordingBody struct {
	rec *bodyRecorder
	r   io.ReadCloser
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.rec.write(p[:n])
	if err == io.EOF {
		b.rec.close(true)
	}
	return n, err
}

func (b *recordingBody) Close() error { return b.r.Close() }
