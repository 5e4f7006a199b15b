package record

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// corkMax bounds the bytes a corkedConn holds before Write waits for the
// flusher: backpressure from a slow peer reaches the relay instead of memory.
const corkMax = 4 << 20

// corkedConn coalesces the writes of a relayed WebSocket connection. The
// WebSocket library flushes after every message, which costs one syscall per
// message on each side of the proxy; here Write only copies into a pending
// buffer and a flusher goroutine writes whatever has accumulated in one
// syscall. An idle connection pays one goroutine hand-off per message; a busy
// one writes many messages per syscall, so the relay keeps up with a direct
// connection. Write errors are reported by the next Write.
type corkedConn struct {
	net.Conn

	mu      sync.Mutex
	cond    sync.Cond // pending changed, or the flusher failed or ended
	pending []byte
	spare   []byte
	err     error
	closing bool
	done    chan struct{}
}

func newCorkedConn(c net.Conn) *corkedConn {
	cc := &corkedConn{Conn: c, done: make(chan struct{})}
	cc.cond.L = &cc.mu
	go cc.flusher()
	return cc
}

func (c *corkedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && !c.closing && len(c.pending) > 0 && len(c.pending)+len(p) > corkMax {
		c.cond.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.closing {
		return 0, net.ErrClosed
	}
	c.pending = append(c.pending, p...)
	c.cond.Broadcast()
	return len(p), nil
}

func (c *corkedConn) flusher() {
	defer close(c.done)
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for len(c.pending) == 0 && !c.closing && c.err == nil {
			c.cond.Wait()
		}
		if c.err != nil || len(c.pending) == 0 {
			return // closing, and everything written
		}
		buf := c.pending
		c.pending = c.spare[:0]
		c.mu.Unlock()
		_, err := c.Conn.Write(buf)
		c.mu.Lock()
		if cap(buf) <= 1<<20 {
			c.spare = buf[:0]
		} else {
			c.spare = nil
		}
		if err != nil {
			c.err = err
			c.pending = nil
		}
		c.cond.Broadcast()
	}
}

// Close writes what is pending (waiting at most a few seconds for a peer
// that does not read) and closes the connection.
func (c *corkedConn) Close() error {
	c.mu.Lock()
	c.closing = true
	c.cond.Broadcast()
	c.mu.Unlock()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
	}
	err := c.Conn.Close()
	<-c.done // the close unblocked a stuck write
	return err
}

// corkingResponseWriter hands the WebSocket library a corked connection
// when it hijacks the client's connection.
type corkingResponseWriter struct {
	http.ResponseWriter
}

func (w corkingResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w corkingResponseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		c.Close()
		return nil, nil, err
	}
	cc := newCorkedConn(c)
	return cc, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(cc, 4096)), nil
}

// corkingTransport returns a transport for WebSocket dials whose connections
// are corked, or t itself if it is not an *http.Transport.
func corkingTransport(t http.RoundTripper) http.RoundTripper {
	ht, ok := t.(*http.Transport)
	if !ok {
		return t
	}
	ht = ht.Clone()
	dial := ht.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	ht.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return newCorkedConn(c), nil
	}
	return ht
}
