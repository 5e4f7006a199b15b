package model

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/wireproof/wireproof/model/anthropic"
)

// Options configure the scripted model. Nil means defaults.
type Options struct {
	// Fault is a fault mode (Faults); "" for none.
	Fault string
	// Logf, when set, gets one line per request: the plan and step played.
	Logf func(format string, args ...any)
	// Stream shapes the streamed answers (nil: the defaults).
	Stream *anthropic.StreamOptions
	// Limits bound what Start's server holds for its clients (nil: the
	// defaults).
	Limits *Limits
}

// Handler serves the Messages API: POST /v1/messages (streamed or not; a
// query such as ?beta=true is ignored) and POST /v1/messages/count_tokens;
// and the Responses API, POST /v1/responses (the Codex CLI's).
// Anything else is answered in the API's error shape.
type Handler struct {
	o      Options
	struck atomic.Bool // the fault mode struck (it strikes once)
}

// NewHandler returns the scripted model's HTTP handler. It fails for an
// unknown fault mode.
func NewHandler(opts *Options) (*Handler, error) {
	h := &Handler{}
	if opts != nil {
		h.o = *opts
	}
	if err := CheckFault(h.o.Fault); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *Handler) logf(format string, args ...any) {
	if h.o.Logf != nil {
		h.o.Logf(format, args...)
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == ResponsesPath {
		h.serveResponses(w, r)
		return
	}
	w.Header().Set("request-id", "req_wireproof")
	if !Routed(w, r) {
		return
	}
	if r.Header.Get("x-api-key") == "" && r.Header.Get("Authorization") == "" {
		anthropic.WriteError(w, anthropic.NewError(anthropic.ErrAuthentication, "x-api-key header is required"))
		return
	}
	body, err := ReadBody(r)
	var large *BodyTooLargeError
	switch {
	case errors.As(err, &large):
		anthropic.WriteError(w, anthropic.NewError(anthropic.ErrRequestTooLarge, large.Error()))
		return
	case err != nil:
		anthropic.WriteError(w, anthropic.NewError(anthropic.ErrInvalidRequest, "reading the request body: "+err.Error()))
		return
	}
	req, aerr := ParseRequest(body, r.URL.Path == "/v1/messages")
	if aerr != nil {
		anthropic.WriteError(w, aerr)
		return
	}
	if r.URL.Path == "/v1/messages/count_tokens" {
		writeJSON(w, anthropic.TokenCount{InputTokens: tokens(len(body))})
		return
	}
	turn := Respond(req)
	fault := ""
	if turn.First && h.o.Fault != "" && h.struck.CompareAndSwap(false, true) {
		fault = h.o.Fault
	}
	if fault == FaultUnknownTool {
		turn.Tool, turn.Input, turn.Text = UnknownTool, map[string]any{"reason": "fault " + FaultUnknownTool}, ""
	}
	h.logf("model: %s/%s%s (%d messages, %d tools)", turn.Plan, turn.Step, faultNote(fault), len(req.Messages), len(req.Tools))
	if fault == FaultOverloaded {
		anthropic.WriteError(w, anthropic.NewError(anthropic.ErrOverloaded, "Overloaded"))
		return
	}
	resp := Message(req, turn, body)
	if !req.Stream {
		writeJSON(w, resp)
		return
	}
	startStream(w)
	sw := anthropic.NewStreamWriter(w)
	for k, ev := range anthropic.Events(resp, h.o.Stream) {
		switch {
		case fault == FaultMalformedEvent && ev.Type == anthropic.EventContentBlockDelta:
			_ = sw.WriteRaw(ev.Type, []byte(MalformedData))
			fault = ""
			continue
		case fault == FaultStreamCut && k > 0 && ev.Type == anthropic.EventContentBlockDelta:
			_ = sw.Write(ev)
			cut(w)
			return
		}
		if sw.Write(ev) != nil {
			return
		}
	}
}

// Routed reports whether r is a call of the Messages API this package
// serves (POST /v1/messages or /v1/messages/count_tokens, any query);
// otherwise it has answered it in the API's error shape: 404 for another
// path, 405 for another method.
func Routed(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/v1/messages", "/v1/messages/count_tokens":
	default:
		anthropic.WriteError(w, anthropic.NewError(anthropic.ErrNotFound, "Not found: "+r.Method+" "+r.URL.Path))
		return false
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		e := anthropic.NewError(anthropic.ErrInvalidRequest, "Method "+r.Method+" is not allowed on "+r.URL.Path+"; use POST")
		e.Status = http.StatusMethodNotAllowed
		anthropic.WriteError(w, e)
		return false
	}
	return true
}

// startStream answers 200 with an event stream's headers.
func startStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func faultNote(f string) string {
	if f == "" {
		return ""
	}
	return " fault " + f
}

// cut ends the response without finishing it: the connection is closed
// under the chunked body, so the client sees the stream end mid-message.
func cut(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// ParseRequest reads a request body and validates what the API requires
// (a model, messages, max_tokens for /v1/messages), answering a bad one
// with an invalid_request_error that says what is wrong.
func ParseRequest(body []byte, messages bool) (*anthropic.Request, *anthropic.APIError) {
	var req anthropic.Request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, anthropic.NewError(anthropic.ErrInvalidRequest, describeJSONError(err, body, anthropicPath).Message)
	}
	switch {
	case req.Model == "":
		return nil, anthropic.NewError(anthropic.ErrInvalidRequest, "model: Field required")
	case len(req.Messages) == 0:
		return nil, anthropic.NewError(anthropic.ErrInvalidRequest, "messages: at least one message is required")
	case messages && req.MaxTokens <= 0:
		return nil, anthropic.NewError(anthropic.ErrInvalidRequest, "max_tokens: Field required (a positive integer)")
	}
	for i, m := range req.Messages {
		switch m.Role {
		case anthropic.RoleUser, anthropic.RoleAssistant, anthropic.RoleSystem:
		default:
			return nil, anthropic.NewError(anthropic.ErrInvalidRequest, fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant', not %q", i, m.Role))
		}
	}
	return &req, nil
}

// Message is the answer to req for turn: a text block, or a tool_use
// block (after the turn's text, if any) with stop_reason tool_use. Its ids
// are a pure function of the request's bytes, so the same request gets the
// same answer and different conversations different ids.
func Message(req *anthropic.Request, turn Turn, body []byte) *anthropic.Response {
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	resp := &anthropic.Response{ID: "msg_wp" + h[:22], Type: "message", Role: anthropic.RoleAssistant, Model: req.Model,
		StopReason: anthropic.StopEndTurn, Usage: anthropic.Usage{InputTokens: tokens(len(body))}}
	if turn.Text != "" || turn.Tool == "" {
		resp.Content = append(resp.Content, anthropic.Block{Type: anthropic.BlockText, Text: turn.Text})
	}
	if turn.Tool != "" {
		in, _ := json.Marshal(turn.Input)
		resp.Content = append(resp.Content, anthropic.Block{Type: anthropic.BlockToolUse, ID: "toolu_wp" + h[22:44], Name: turn.Tool, Input: in})
		resp.StopReason = anthropic.StopToolUse
	}
	n := 0
	for _, b := range resp.Content {
		n += len(b.Text) + len(b.Input)
	}
	resp.Usage.OutputTokens = tokens(n)
	return resp
}

// tokens estimates a token count from a byte count (about 4 bytes a token).
func tokens(n int) int { return n/4 + 1 }

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// Server is the scripted model listening on loopback.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	cancel context.CancelFunc // ends the requests' context
	done   chan struct{}
	err    error
	once   sync.Once
}

// Start listens on addr ("" means 127.0.0.1:0) and serves the model until
// Close or ctx's end.
func Start(ctx context.Context, addr string, opts *Options) (*Server, error) {
	h, err := NewHandler(opts)
	if err != nil {
		return nil, err
	}
	var lim *Limits
	if opts != nil {
		lim = opts.Limits
	}
	return ServeLimits(ctx, addr, h, lim)
}

// Serve listens on addr ("" means 127.0.0.1:0) and serves h there until
// Close or ctx's end: another Messages API than the scripted one (a
// cassette, package model/cassette) served the same way, within the
// default Limits.
func Serve(ctx context.Context, addr string, h http.Handler) (*Server, error) {
	return ServeLimits(ctx, addr, h, nil)
}

// ServeLimits is Serve within lim (nil: the defaults): a connection that
// does not send its headers in time is closed, and so is one idle for
// long; a request's body has BodyTimeout to arrive once let in, and
// requests whose bodies would take the bytes in flight past InFlight wait
// their turn.
func ServeLimits(ctx context.Context, addr string, h http.Handler, lim *Limits) (*Server, error) {
	l := lim.withDefaults()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("model: listen on %s: %w", addr, err)
	}
	base, cancel := context.WithCancel(context.Background())
	srv := &http.Server{
		Handler:           newGate(h, l),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	s := &Server{ln: ln, srv: srv, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

// URL is the base URL to give a client as ANTHROPIC_BASE_URL
// (http://127.0.0.1:PORT, no trailing slash).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Addr is the address listened on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, closing its connections, and waits for it.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.cancel()
		_ = s.srv.Close()
		<-s.done
	})
	return s.err
}

// Done is closed when the server has stopped.
func (s *Server) Done() <-chan struct{} { return s.done }
