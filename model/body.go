package model

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"
)

// MaxBody caps a request body (the CLIs' are ~50 KB and grow with the
// conversation; a long one is a few MB).
const MaxBody = 32 << 20

// Defaults of Limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 5 * time.Minute
	DefaultBodyTimeout       = 2 * time.Minute
	DefaultInFlight          = 2 * MaxBody
)

// Limits bound what the server holds for its clients. A zero field means
// its default.
type Limits struct {
	// ReadHeaderTimeout is how long a connection has to send a request's
	// headers (the CLIs send them at once).
	ReadHeaderTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request: longer than the CLIs' own pools keep one idle, so the
	// server does not close a connection a client is about to reuse.
	IdleTimeout time.Duration
	// BodyTimeout is how long a request has to send its body once it is
	// let in (see InFlight). There is no read timeout from the request's
	// start: a request that waits its turn must not lose its body to it.
	BodyTimeout time.Duration
	// InFlight bounds the bytes of request bodies being handled at once
	// (a body's Content-Length, or MaxBody when it has none): a request
	// past it waits until earlier ones are answered, so the memory held
	// does not grow with the number of clients. It is at least MaxBody.
	InFlight int64
}

func (l *Limits) withDefaults() Limits {
	var o Limits
	if l != nil {
		o = *l
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.InFlight <= 0 {
		o.InFlight = DefaultInFlight
	}
	o.InFlight = max(o.InFlight, MaxBody)
	return o
}

// BodyTooLargeError is a request body over MaxBody.
type BodyTooLargeError struct{ Limit int64 }

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("Request exceeds the maximum size of %d bytes", e.Limit)
}

// ReadBody reads r's body, of at most MaxBody bytes (a
// *BodyTooLargeError past it; a Content-Length past it is refused
// unread). A body of known length is read into a buffer of its size.
func ReadBody(r *http.Request) ([]byte, error) {
	switch n := r.ContentLength; {
	case n > MaxBody:
		return nil, &BodyTooLargeError{Limit: MaxBody}
	case n >= 0:
		b := make([]byte, n)
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err == nil && len(b) > MaxBody {
		return nil, &BodyTooLargeError{Limit: MaxBody}
	}
	return b, err
}

// gate lets a request's handler run once the bytes of the bodies in
// flight leave room for its own, and gives its body BodyTimeout to
// arrive.
type gate struct {
	h    http.Handler
	lim  Limits
	room *semaphore.Weighted
}

// admitted, if set (by the tests), is called with a request's weight once
// the gate has let it in.
var admitted func(n int64)

func newGate(h http.Handler, lim Limits) *gate {
	return &gate{h: h, lim: lim, room: semaphore.NewWeighted(lim.InFlight)}
}

// weight is what r's body counts against InFlight: a refused one (over
// MaxBody, read by nobody) nothing, one of unknown length MaxBody.
func (g *gate) weight(r *http.Request) int64 {
	switch n := r.ContentLength; {
	case n > MaxBody:
		return 0
	case n < 0:
		return MaxBody
	default:
		return n
	}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := g.weight(r)
	if n == 0 {
		g.h.ServeHTTP(w, r)
		return
	}
	// The request's context ends with the server (Server.Close).
	if err := g.room.Acquire(r.Context(), n); err != nil {
		return
	}
	defer g.room.Release(n)
	if admitted != nil {
		admitted(n)
	}
	// The server lifts the deadline once the body is read, to watch the
	// connection for the client leaving: a long answer keeps its context.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(g.lim.BodyTimeout))
	g.h.ServeHTTP(w, r)
}
