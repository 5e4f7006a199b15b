package t3

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/wireproof/wireproof/protocol/effectrpc"
)

// RPCOptions configures an Effect RPC socket. A nil *RPCOptions means defaults.
type RPCOptions struct {
	// PingInterval is how often the client sends {"_tag":"Ping"}; 0 means 5s as
	// Effect v4 does, a negative value disables pings. A connection that answers
	// no Pong for two intervals is closed.
	PingInterval time.Duration
	// StringIDs sends request ids as decimal strings, as Effect before
	// 4.0.0-beta.96 does, instead of numbers.
	StringIDs bool
	// Serialization is "json" (the default: one message per frame) or "ndjson"
	// (every message ends with a newline, frames may hold several).
	Serialization string
	// CloseGrace is how long Close waits for the Exits answering the
	// Interrupts it sent (and those Stream.Close and a cancelled Call sent)
	// before it closes the socket; 0 means 5s, a negative value does not wait.
	CloseGrace time.Duration
}

// ReadLimit is the largest WebSocket message the client accepts.
const ReadLimit = 64 << 20

// DialRPC opens the Effect RPC socket with a WebSocket ticket.
func (c *Client) DialRPC(ctx context.Context, ticket string, opts *RPCOptions) (*RPCClient, error) {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("t3: base URL %q: %w", c.BaseURL, err)
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	case "ws", "wss":
	default:
		return nil, fmt.Errorf("t3: base URL %q: scheme must be http or https", c.BaseURL)
	}
	u.Path = PathWebSocket
	u.RawQuery = ProtocolQueryParam + "=" + strconv.Itoa(ProtocolVersion) + "&" + TicketQueryParam + "=" + url.QueryEscape(ticket)
	return DialRPCURL(ctx, u.String(), c.HTTP, opts)
}

// DialRPCURL opens an Effect RPC socket at a full ws:// URL; hc may be nil.
func DialRPCURL(ctx context.Context, wsURL string, hc *http.Client, opts *RPCOptions) (*RPCClient, error) {
	o := RPCOptions{}
	if opts != nil {
		o = *opts
	}
	if o.PingInterval == 0 {
		o.PingInterval = 5 * time.Second
	}
	if o.CloseGrace == 0 {
		o.CloseGrace = 5 * time.Second
	}
	switch o.Serialization {
	case "":
		o.Serialization = "json"
	case "json", "ndjson":
	default:
		return nil, fmt.Errorf("t3: unknown RPC serialization %q (want json or ndjson)", o.Serialization)
	}
	conn, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{
		HTTPClient: hc,
		// Effect's clients offer permessage-deflate; T3 declines it.
		CompressionMode: websocket.CompressionNoContextTakeover,
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			he := &HTTPError{Method: http.MethodGet, Path: PathWebSocket, Status: resp.StatusCode}
			if resp.Body != nil {
				he.Body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				var tagged struct{ Code, Reason string }
				if json.Unmarshal(he.Body, &tagged) == nil {
					he.Code, he.Reason = tagged.Code, tagged.Reason
				}
			}
			return nil, he
		}
		return nil, fmt.Errorf("t3: dialing %s: %w", PathWebSocket, err)
	}
	conn.SetReadLimit(ReadLimit)
	return newRPCClient(conn, o), nil
}

// RPCClient is one Effect RPC socket. Calls and streams may be made from any
// number of goroutines; one reader goroutine dispatches answers by request id.
//
// Every frame is written under the client's own context, never a caller's:
// coder/websocket closes the whole connection (no close frame, a 1006 for
// the peer) when the context of a write ends while it is under way, so a
// caller's cancelled context bounds only how long it waits. Close ends the
// way Effect's client does: every call and stream still open is
// interrupted, the Exits answering the Interrupts are waited for
// (CloseGrace), then the socket is closed with 1000.
type RPCClient struct {
	conn *websocket.Conn
	opts RPCOptions

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	nextID  uint64
	pending map[string]*pendingCall
	// interrupting are the calls interrupted and not yet answered: the
	// server answers each with an Exit, which nobody waits for but Close.
	interrupting map[string]*pendingCall
	// closing is set by Close before it interrupts what is open: the Exits
	// answering those Interrupts are not the callers' answers (a Next after
	// Close says the client closed).
	closing   bool
	answered  chan struct{} // capacity 1: an interrupted call was answered
	closeOnce sync.Once
	err       error // why the connection ended
	defect    json.RawMessage
	pong      chan struct{}
	frames    atomic.Int64 // frames received, to tell a silent server from a slow one
}

// pendingCall is one request awaiting its Exit. Streams queue their chunks.
type pendingCall struct {
	method string
	id     effectrpc.RequestID
	stream bool

	mu     sync.Mutex
	queue  []json.RawMessage // values not yet handed out
	acks   []int             // values left in each queued chunk (to ack when consumed)
	exit   *effectrpc.Exit
	err    error
	notify chan struct{} // capacity 1: something changed
}

func (p *pendingCall) signal() {
	select {
	case p.notify <- struct{}{}:
	default:
	}
}

func newRPCClient(conn *websocket.Conn, o RPCOptions) *RPCClient {
	ctx, cancel := context.WithCancel(context.Background())
	r := &RPCClient{conn: conn, opts: o, ctx: ctx, cancel: cancel, pending: map[string]*pendingCall{}, pong: make(chan struct{}, 1),
		interrupting: map[string]*pendingCall{}, answered: make(chan struct{}, 1)}
	r.wg.Add(1)
	go r.readLoop()
	if o.PingInterval > 0 {
		r.wg.Add(1)
		go r.pingLoop()
	}
	return r
}

// ConnectionError says why an RPC socket ended: closed by Close, by the peer
// (with its close code), or failed.
type ConnectionError struct {
	Code   websocket.StatusCode // -1 when no close frame was received
	Reason string
	Err    error
}

func (e *ConnectionError) Error() string {
	if e.Code >= 0 {
		return strings.TrimSpace(fmt.Sprintf("t3: rpc connection closed: %d %s", e.Code, e.Reason))
	}
	return fmt.Sprintf("t3: rpc connection ended: %v", e.Err)
}
func (e *ConnectionError) Unwrap() error { return e.Err }

// SerializationMismatchError is the cause of a ConnectionError when the
// server does not speak the serialization the client was set to. Effect does
// not negotiate it (RpcSerialization.layerJson or layerNdjson is chosen on
// each side), so a mismatch shows only as frames the other side cannot
// split: an ndjson client gets whole JSON messages without their newline; a
// json client gets nothing at all, because an ndjson server waits for a
// newline its frames never have.
type SerializationMismatchError struct {
	Client string // the serialization the client was set to
	Server string // what the server was seen to speak; "" when only suspected
	Seen   string // what showed it
}

func (e *SerializationMismatchError) Error() string {
	if e.Server != "" {
		return fmt.Sprintf("t3: serialization mismatch: the server speaks Effect RPC %s, the client was set to %s (%s)", e.Server, e.Client, e.Seen)
	}
	other := map[string]string{"json": "ndjson", "ndjson": "json"}[e.Client]
	return fmt.Sprintf("t3: probably a serialization mismatch: %s; a server that speaks %s instead of %s waits for frames it can split and answers nothing", e.Seen, other, e.Client)
}

// ErrClientClosed is the cause of a ConnectionError after RPCClient.Close.
var ErrClientClosed = errors.New("t3: rpc client closed")

// RPCError is a failed call: a Failure Exit (Causes decoded from the flat v4
// cause, Exit kept as sent) or a connection-wide Defect frame.
type RPCError struct {
	Method string
	Exit   *effectrpc.Exit
	Causes []effectrpc.CauseItem
	Defect json.RawMessage // set for a Defect frame
}

func (e *RPCError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "t3: %s failed", e.Method)
	if len(e.Defect) > 0 {
		fmt.Fprintf(&b, ": defect %s", describeJSON(e.Defect))
		return b.String()
	}
	for i, c := range e.Causes {
		sep := ": "
		if i > 0 {
			sep = "; "
		}
		b.WriteString(sep)
		switch c.Tag {
		case effectrpc.CauseFail:
			var tagged struct {
				Tag     string `json:"_tag"`
				Message string `json:"message"`
			}
			if json.Unmarshal(c.Error, &tagged) == nil && tagged.Tag != "" {
				fmt.Fprintf(&b, "%s", tagged.Tag)
				if tagged.Message != "" {
					fmt.Fprintf(&b, " %s", tagged.Message)
				}
			} else {
				fmt.Fprintf(&b, "Fail %s", describeJSON(c.Error))
			}
		case effectrpc.CauseDie:
			fmt.Fprintf(&b, "Die %s", describeJSON(c.Defect))
		case effectrpc.CauseInterrupt:
			fmt.Fprintf(&b, "Interrupt (fiber %s)", c.FiberID)
		default:
			fmt.Fprintf(&b, "%s", c.Tag)
		}
	}
	if len(e.Causes) == 0 && e.Exit != nil {
		fmt.Fprintf(&b, ": cause %s", describeJSON(e.Exit.Cause))
	}
	return b.String()
}

// Interrupted reports whether the failure holds an Interrupt cause.
func (e *RPCError) Interrupted() bool {
	for _, c := range e.Causes {
		if c.Tag == effectrpc.CauseInterrupt {
			return true
		}
	}
	return false
}

// describeJSON renders a defect or error compactly: a JSON string as its text,
// a {"name","message"} object as "name: message", anything else as JSON.
func describeJSON(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var nm struct{ Name, Message string }
	if json.Unmarshal(raw, &nm) == nil && (nm.Name != "" || nm.Message != "") {
		return strings.TrimPrefix(nm.Name+": "+nm.Message, ": ")
	}
	return string(raw)
}

func newExitError(method string, exit *effectrpc.Exit) *RPCError {
	e := &RPCError{Method: method, Exit: exit}
	_ = json.Unmarshal(exit.Cause, &e.Causes) // a v3 tree does not decode as a list; Exit keeps it
	return e
}

// Call sends one request and waits for its Exit. On success the value is
// decoded into result unless result is nil. A failure is an *RPCError; a
// connection that ends first gives a *ConnectionError.
func (r *RPCClient) Call(ctx context.Context, method string, payload any, result any) error {
	p, err := r.send(ctx, method, payload, false)
	if err != nil {
		return err
	}
	for {
		p.mu.Lock()
		exit, perr := p.exit, p.err
		p.queue, p.acks = nil, nil // a Call has no stream values
		p.mu.Unlock()
		if perr != nil {
			return perr
		}
		if exit != nil {
			if exit.Tag != effectrpc.ExitSuccess {
				return newExitError(method, exit)
			}
			if result != nil {
				if err := json.Unmarshal(exit.Value, result); err != nil {
					return fmt.Errorf("t3: %s: decoding result: %w", method, err)
				}
			}
			return nil
		}
		select {
		case <-p.notify:
		case <-ctx.Done():
			r.interrupt(p)
			return ctx.Err()
		}
	}
}

// RPCStream is one streaming call. Next and Close must not be called
// concurrently with each other.
type RPCStream struct {
	r      *RPCClient
	p      *pendingCall
	closed bool
}

// Stream starts a streaming call. Values arrive through Next.
func (r *RPCClient) Stream(ctx context.Context, method string, payload any) (*RPCStream, error) {
	p, err := r.send(ctx, method, payload, true)
	if err != nil {
		return nil, err
	}
	return &RPCStream{r: r, p: p}, nil
}

// Next returns the next stream value, io.EOF after the stream's Success end,
// an *RPCError for a Failure end and a *ConnectionError if the socket ended.
// The Ack of a Chunk is sent when its last value is handed out: the server
// sends nothing more on this stream before that.
func (s *RPCStream) Next(ctx context.Context) (json.RawMessage, error) {
	p := s.p
	for {
		// A caller that gave up takes no value: a value handed out is acked,
		// and an Ack must not be written for a caller that is gone.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p.mu.Lock()
		if len(p.queue) > 0 {
			v := p.queue[0]
			p.queue = p.queue[1:]
			p.acks[0]--
			ack := p.acks[0] == 0
			if ack {
				p.acks = p.acks[1:]
			}
			p.mu.Unlock()
			if ack {
				if err := s.r.write(effectrpc.Message{Tag: effectrpc.TagAck, RequestID: p.id}); err != nil {
					return nil, err
				}
			}
			return v, nil
		}
		exit, perr := p.exit, p.err
		p.mu.Unlock()
		if perr != nil {
			return nil, perr
		}
		if exit != nil {
			s.closed = true
			if exit.Tag == effectrpc.ExitSuccess {
				return nil, io.EOF
			}
			return nil, newExitError(p.method, exit)
		}
		select {
		case <-p.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close ends the stream: if its Exit has not arrived it sends Interrupt (the
// server answers an Exit with an Interrupt cause, which is dropped).
func (s *RPCStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.p.mu.Lock()
	done := s.p.exit != nil || s.p.err != nil
	s.p.mu.Unlock()
	if done {
		return nil
	}
	return s.r.interrupt(s.p)
}

// interrupt sends the Interrupt of p if it is still open, and counts it
// among the interrupted calls whose Exit Close waits for.
func (r *RPCClient) interrupt(p *pendingCall) error {
	r.mu.Lock()
	key := p.id.Key()
	if r.pending[key] != p || r.err != nil {
		r.mu.Unlock()
		return nil // answered already, or the connection is gone
	}
	delete(r.pending, key)
	r.interrupting[key] = p
	r.mu.Unlock()
	return r.write(effectrpc.Message{Tag: effectrpc.TagInterrupt, RequestID: p.id})
}

// Close ends the connection the way Effect's client does: it interrupts
// every call and stream still open, waits (at most CloseGrace) until the
// server has answered every Interrupt with its Exit, and closes the socket
// with 1000 (normal closure). Then it waits for the client's goroutines;
// pending calls fail with a *ConnectionError wrapping ErrClientClosed.
// Close may be called more than once.
func (r *RPCClient) Close() error {
	r.closeOnce.Do(r.close)
	return nil
}

func (r *RPCClient) close() {
	r.mu.Lock()
	r.closing = true
	open := make([]*pendingCall, 0, len(r.pending))
	for _, p := range r.pending {
		open = append(open, p)
	}
	r.mu.Unlock()
	for _, p := range open {
		if r.interrupt(p) != nil {
			break // the connection is gone
		}
	}
	if r.opts.CloseGrace > 0 {
		grace := time.NewTimer(r.opts.CloseGrace)
		for r.waitingForExits() {
			select {
			case <-r.answered:
				continue
			case <-grace.C:
			case <-r.ctx.Done():
			}
			break
		}
		grace.Stop()
	}
	r.fail(&ConnectionError{Code: -1, Err: ErrClientClosed})
	// The close handshake's own errors (the peer went first, the socket is
	// gone) say nothing the caller can act on; Err keeps the reason.
	_ = r.conn.Close(websocket.StatusNormalClosure, "")
	r.cancel()
	r.wg.Wait()
}

// waitingForExits reports whether an interrupted call is still unanswered
// on a connection that is open.
func (r *RPCClient) waitingForExits() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err == nil && len(r.interrupting) > 0
}

// Err reports why the connection ended; nil while it is open.
func (r *RPCClient) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// LastDefect is the payload of the last Defect frame received, if any.
func (r *RPCClient) LastDefect() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.defect
}

func (r *RPCClient) send(ctx context.Context, method string, payload any, stream bool) (*pendingCall, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("t3: %s: encoding payload: %w", method, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err // nothing is sent for a caller that gave up
	}
	r.mu.Lock()
	if r.err != nil {
		err := r.err
		r.mu.Unlock()
		return nil, err
	}
	n := r.nextID
	r.nextID++
	id := effectrpc.NumberID(n)
	if r.opts.StringIDs {
		id = effectrpc.StringID(n)
	}
	p := &pendingCall{method: method, id: id, stream: stream, notify: make(chan struct{}, 1)}
	r.pending[id.Key()] = p
	r.mu.Unlock()
	if err := r.write(effectrpc.Message{Tag: effectrpc.TagRequest, ID: id, Method: method, Payload: raw}); err != nil {
		r.forget(p)
		return nil, err
	}
	return p, nil
}

// forget stops waiting for p and reports whether it was still open: false
// when its Exit (or the connection's end) already took it, so there is
// nothing left to interrupt.
func (r *RPCClient) forget(p *pendingCall) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending[p.id.Key()] == p {
		delete(r.pending, p.id.Key())
		return true
	}
	return false
}

// write sends one message under the client's context (see RPCClient): it
// ends only when the connection does.
func (r *RPCClient) write(m effectrpc.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if r.opts.Serialization == "ndjson" {
		b = append(b, '\n')
	}
	if err := r.conn.Write(r.ctx, websocket.MessageText, b); err != nil {
		if cerr := r.Err(); cerr != nil {
			return cerr
		}
		return &ConnectionError{Code: -1, Err: err}
	}
	return nil
}

// fail ends the connection with err (the first reason wins) and fails every
// pending call with it.
func (r *RPCClient) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	err = r.err
	pending := r.pending
	r.pending = map[string]*pendingCall{}
	for _, p := range r.interrupting {
		pending[p.id.Key()] = p // a Next after Close says why
	}
	r.interrupting = map[string]*pendingCall{}
	r.mu.Unlock()
	for _, p := range pending {
		p.mu.Lock()
		if p.err == nil && p.exit == nil {
			p.err = err
		}
		p.mu.Unlock()
		p.signal()
	}
}

func (r *RPCClient) readLoop() {
	defer r.wg.Done()
	defer r.cancel()
	var partial []byte // ndjson: an unfinished line
	for {
		_, data, err := r.conn.Read(r.ctx)
		if err == nil {
			r.frames.Add(1)
		}
		if err != nil {
			ce := &ConnectionError{Code: websocket.CloseStatus(err), Err: err}
			var cl websocket.CloseError
			if errors.As(err, &cl) {
				ce.Reason = cl.Reason
			}
			r.fail(ce)
			return
		}
		if r.opts.Serialization == "ndjson" {
			partial = append(partial, data...)
			if bytes.IndexByte(data, '\n') < 0 && wholeJSONMessage(partial) {
				// Effect's ndjson ends every message with a newline, in the
				// frame that carries it: this is json serialization.
				r.fail(&ConnectionError{Code: -1, Err: &SerializationMismatchError{Client: "ndjson", Server: "json",
					Seen: fmt.Sprintf("a frame holds a whole message without the newline ndjson ends each one with: %.120s", partial)}})
				_ = r.conn.CloseNow()
				return
			}
			for {
				i := bytes.IndexByte(partial, '\n')
				if i < 0 {
					break
				}
				line := partial[:i]
				partial = partial[i+1:]
				if len(bytes.TrimSpace(line)) > 0 {
					r.dispatchFrame(line)
				}
			}
			if len(partial) > 16<<20 {
				r.fail(&ConnectionError{Code: -1, Err: errors.New("ndjson line longer than 16 MiB")})
				_ = r.conn.CloseNow()
				return
			}
			continue
		}
		r.dispatchFrame(data)
	}
}

// dispatchFrame handles one frame: a message or (Effect v4) an array of them.
func (r *RPCClient) dispatchFrame(data []byte) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var msgs []effectrpc.Message
		if json.Unmarshal(trimmed, &msgs) == nil {
			for i := range msgs {
				r.dispatch(&msgs[i])
			}
		}
		return
	}
	var m effectrpc.Message
	if json.Unmarshal(trimmed, &m) != nil {
		return // not a message: nothing to route it to
	}
	r.dispatch(&m)
}

func (r *RPCClient) dispatch(m *effectrpc.Message) {
	switch m.Tag {
	case effectrpc.TagPong:
		select {
		case r.pong <- struct{}{}:
		default:
		}
	case effectrpc.TagDefect:
		r.mu.Lock()
		r.defect = m.Defect
		pending := r.pending
		r.pending = map[string]*pendingCall{}
		r.mu.Unlock()
		for _, p := range pending {
			p.mu.Lock()
			if p.err == nil && p.exit == nil {
				p.err = &RPCError{Method: p.method, Defect: m.Defect}
			}
			p.mu.Unlock()
			p.signal()
		}
	case effectrpc.TagChunk, effectrpc.TagExit:
		key := m.RequestID.Key()
		r.mu.Lock()
		p := r.pending[key]
		if m.Tag == effectrpc.TagExit {
			delete(r.pending, key)
			if ip := r.interrupting[key]; ip != nil {
				// The Exit answering an Interrupt: a Next still called on the
				// stream gets it (its cause holds the Interrupt).
				delete(r.interrupting, key)
				p = ip
				select {
				case r.answered <- struct{}{}:
				default:
				}
				if r.closing {
					// Close interrupted it: fail gives the caller
					// ErrClientClosed, not the Interrupt's Exit.
					r.pending[key] = p
					r.mu.Unlock()
					return
				}
			}
		} else if r.interrupting[key] != nil {
			r.mu.Unlock()
			return // a chunk sent before the Interrupt arrived: nobody takes it
		}
		r.mu.Unlock()
		if p == nil {
			return // unknown: nobody waits for it
		}
		p.mu.Lock()
		if m.Tag == effectrpc.TagExit {
			if m.Exit == nil {
				m.Exit = &effectrpc.Exit{Tag: effectrpc.ExitFailure, Cause: json.RawMessage(`[{"_tag":"Die","defect":"Exit without exit"}]`)}
			}
			p.exit = m.Exit
		} else {
			var vals []json.RawMessage
			_ = json.Unmarshal(m.Values, &vals)
			if p.stream && len(vals) > 0 {
				p.queue = append(p.queue, vals...)
				p.acks = append(p.acks, len(vals))
			} else {
				// An empty chunk or a chunk on a non-stream call: ack at once so
				// the server is not stalled.
				r.wg.Add(1)
				go func(id effectrpc.RequestID) {
					defer r.wg.Done()
					_ = r.write(effectrpc.Message{Tag: effectrpc.TagAck, RequestID: id})
				}(p.id)
			}
		}
		p.mu.Unlock()
		p.signal()
	}
}

func (r *RPCClient) pingLoop() {
	defer r.wg.Done()
	t := time.NewTicker(r.opts.PingInterval)
	defer t.Stop()
	outstanding := 0
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.pong:
			outstanding = 0
		case <-t.C:
			if outstanding >= 2 {
				err := errors.New("no Pong for two ping intervals")
				if r.frames.Load() == 0 {
					err = &SerializationMismatchError{Client: cmp.Or(r.opts.Serialization, "json"),
						Seen: "no Pong for two ping intervals, and no frame at all since the connection opened"}
				}
				r.fail(&ConnectionError{Code: -1, Err: err})
				_ = r.conn.CloseNow()
				return
			}
			outstanding++
			if err := r.write(effectrpc.Message{Tag: effectrpc.TagPing}); err != nil {
				return
			}
		}
	}
}

// wholeJSONMessage reports whether b is one complete JSON object or array
// (an RPC message or a batch of them) and nothing else.
func wholeJSONMessage(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Valid(b)
}
