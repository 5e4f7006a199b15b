package record

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wireproof/wireproof/internal/httphop"
)

// DefaultMaxMessageSize is the WebSocket read limit of the proxy on both sides.
// coder/websocket defaults to 32 KiB, far below a projection snapshot.
const DefaultMaxMessageSize = 64 << 20

// ProxyOptions configures a Proxy.
type ProxyOptions struct {
	// Upstream is the server every request is relayed to (http or https).
	// Its path, if any, prefixes every request path.
	Upstream *url.URL
	// Transport relays HTTP requests and dials WebSocket upstreams. Default: a
	// clone of http.DefaultTransport.
	Transport http.RoundTripper
	// MaxMessageSize is the WebSocket read limit on both sides, default
	// DefaultMaxMessageSize.
	MaxMessageSize int64
	// ConnPrefix is put before the connection names ("model-" names them
	// "model-h1", "model-ws1"), so two proxies can record into one Recorder
	// without sharing names. Empty: "h1", "ws1".
	ConnPrefix string
}

// Proxy is a recording reverse proxy for one upstream. It relays every HTTP
// request (any method, streamed both ways) and every WebSocket connection, and
// records them through a Recorder: HTTP exchanges as conns "h1", "h2", ...,
// WebSocket connections as "ws1", "ws2", ... (after ProxyOptions.ConnPrefix)
//
// Events are emitted before the bytes they record are passed on, so a reply
// can never be recorded before what caused it. ServeHTTP is safe for
// concurrent use; Close ends every WebSocket connection still open.
type Proxy struct {
	rec       *Recorder
	upstream  *url.URL
	transport http.RoundTripper
	maxMsg    int64
	prefix    string

	httpIDs atomic.Uint64
	wsIDs   atomic.Uint64

	// inflates orders the large decompressions of compressed WebSocket
	// messages (see inflateOrder).
	inflates *inflateOrder

	ctx    context.Context // cancelled by Close; relays run under it
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	relays map[*wsRelay]struct{}
	wg     sync.WaitGroup
}

// NewProxy returns a Proxy recording into rec.
func NewProxy(rec *Recorder, opts *ProxyOptions) (*Proxy, error) {
	if rec == nil {
		return nil, errors.New("record: NewProxy needs a Recorder")
	}
	if opts == nil || opts.Upstream == nil {
		return nil, errors.New("record: NewProxy needs an upstream URL")
	}
	u := opts.Upstream
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("record: upstream %q: scheme must be http or https", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("record: upstream %q has no host", u.Redacted())
	}
	p := &Proxy{
		rec:       rec,
		upstream:  u,
		transport: opts.Transport,
		maxMsg:    opts.MaxMessageSize,
		prefix:    opts.ConnPrefix,
		relays:    map[*wsRelay]struct{}{},
		inflates:  newInflateOrder(),
	}
	if p.transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DisableCompression = true // relay bodies as the upstream encodes them
		t.MaxIdleConnsPerHost = 64  // many concurrent clients share one upstream
		// A busy streamed body is read in large pieces, several of the
		// upstream's chunks per system call (see relayBody): 64 KiB took as
		// little CPU per GiB as 256 KiB, for a quarter of the memory per
		// upstream connection.
		t.ReadBufferSize = 64 << 10
		p.transport = t
	}
	if p.maxMsg <= 0 {
		p.maxMsg = DefaultMaxMessageSize
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// ServeHTTP relays and records one request: a WebSocket upgrade or a plain HTTP
// exchange.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if httphop.IsWebSocketUpgrade(r) {
		p.serveWebSocket(w, r)
		return
	}
	p.serveHTTP(w, r)
}

// Close closes every WebSocket connection still relayed (with status 1001 to
// both sides), waits for their goroutines, and closes idle upstream
// connections. Requests arriving afterwards get 503.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	relays := make([]*wsRelay, 0, len(p.relays))
	for r := range p.relays {
		relays = append(relays, r)
	}
	p.mu.Unlock()
	for _, r := range relays {
		r.shutdown()
	}
	p.wg.Wait()
	p.cancel()
	if t, ok := p.transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
	return nil
}

// track registers a running relay; it reports false once the proxy is closed.
func (p *Proxy) track(r *wsRelay) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.relays[r] = struct{}{}
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(r *wsRelay) {
	p.mu.Lock()
	delete(p.relays, r)
	p.mu.Unlock()
	p.wg.Done()
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// target returns the upstream URL for a request path and query.
func (p *Proxy) target(r *http.Request) *url.URL {
	u := *p.upstream
	u.Path, u.RawPath = joinPath(p.upstream, r.URL)
	u.RawQuery = r.URL.RawQuery
	u.Fragment = ""
	return &u
}

func joinPath(a, b *url.URL) (path, rawpath string) {
	if a.Path == "" || a.Path == "/" {
		return b.Path, b.RawPath
	}
	ap, bp := a.EscapedPath(), b.EscapedPath()
	joined := strings.TrimSuffix(ap, "/") + "/" + strings.TrimPrefix(bp, "/")
	path = strings.TrimSuffix(a.Path, "/") + "/" + strings.TrimPrefix(b.Path, "/")
	if joined == (&url.URL{Path: path}).EscapedPath() {
		return path, ""
	}
	return path, joined
}

// Server is a Proxy listening on a loopback (or given) address; see Listen.
type Server struct {
	// URL is the proxy's base URL, "http://127.0.0.1:PORT".
	URL string
	// Addr is the address it listens on.
	Addr  net.Addr
	proxy *Proxy
	srv   *http.Server
	done  chan error
}

// Listen serves p on addr ("127.0.0.1:0" if empty) until Close. ctx only bounds
// setting up the listener; the server runs until Close is called.
func Listen(ctx context.Context, addr string, p *Proxy) (*Server, error) {
	return ListenHandler(ctx, addr, p, p)
}

// ListenHandler is Listen serving h, a handler in front of p (one that
// looks at each request before p records it, as wireprooftest's
// RedactRequest hook does); Close closes p as Listen's server does.
// headerTimeout bounds how long a client may take to send a request's
// header, and idleTimeout how long a kept-alive connection may wait for its
// next request: a client that opens connections and sends half a header
// (slowloris) no longer holds them forever. Real clients send a header in
// far less; a WebSocket, once upgraded, is bound by neither. Variables for
// the tests.
var (
	headerTimeout = 30 * time.Second
	idleTimeout   = 5 * time.Minute
)

func ListenHandler(ctx context.Context, addr string, p *Proxy, h http.Handler) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("record: listen on %s: %w", addr, err)
	}
	s := &Server{
		URL:   "http://" + ln.Addr().String(),
		Addr:  ln.Addr(),
		proxy: p,
		srv:   &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout},
		done:  make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Close stops accepting connections, closes the proxy's WebSocket connections,
// waits for in-flight HTTP exchanges to finish, and returns once the server
// has stopped. Long streamed responses are cut when ctx ends.
func (s *Server) Close(ctx context.Context) error {
	perr := s.proxy.Close()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return errors.Join(perr, err)
}
