package protocol

import (
	"bytes"

	"github.com/wireproof/wireproof/bundle"
)

// Route gives the connections that carry one protocol to its decoder.
type Route struct {
	Protocol Name
	// Match reports whether a connection carries the protocol, from the event
	// that opened it (ws.open or http.request; a stdio channel's proc.start,
	// nil for stdio lines with none) and its first message (a ws.message or stdio.line; nil when
	// the connection ended before one, or for HTTP, which is routed at its
	// request).
	Match func(open, first *bundle.Event) bool
	// Decoder decodes every connection routed here.
	Decoder Decoder
}

// Router routes each connection of a bundle to the first Route that matches
// what it carries, and feeds that decoder the connection's events. A
// connection that no route takes is ignored. Not safe for concurrent use.
//
// A connection's entry is dropped when the connection ends: an HTTP
// exchange at its http.end; a WebSocket once both sides' closes are recorded,
// or one abnormal end (no close frame), or the recorder's own close at
// shutdown (a ws.close with no direction); a stdio channel at the proc.exit
// of its process (same conn). So memory is bounded by the connections open
// at once, not by the bundle. The last maxRetired ended connections keep
// their route, so that what is recorded after an end (a stdout line drained
// after the exit, a frame the other side sent before it saw the close) still
// reaches the same decoder.
type Router struct {
	routes  []Route
	emit    Emit
	conns   map[string]*routed
	order   []Decoder // decoders in route order, for Stop
	retired map[string]*routed
	ring    [maxRetired]string // retired conns, oldest forgotten first
	next    int
}

// maxRetired is how many ended connections keep their route.
const maxRetired = 64

type routed struct {
	open     *bundle.Event // the ws.open held until the first message decides
	decoder  Decoder       // nil: undecided or ignored
	protocol Name
	decided  bool
	closed   [2]bool // WebSocket: a close recorded from the client, from the server
}

// NewRouter returns a router over routes, tried in order, reporting to emit.
func NewRouter(routes []Route, emit Emit) *Router {
	r := &Router{routes: routes, emit: emit, conns: map[string]*routed{}, retired: map[string]*routed{}}
	for _, rt := range routes {
		r.order = append(r.order, rt.Decoder)
	}
	return r
}

// Protocol says which protocol a connection was routed to ("" if none, or
// if it ended long ago).
func (r *Router) Protocol(conn string) Name {
	if c := r.lookup(conn); c != nil {
		return c.protocol
	}
	return ""
}

// Conns is the number of connections the router holds an entry for: those
// not ended.
func (r *Router) Conns() int { return len(r.conns) }

// lookup finds a connection's entry, open or recently ended.
func (r *Router) lookup(conn string) *routed {
	if c := r.conns[conn]; c != nil {
		return c
	}
	return r.retired[conn]
}

// retire drops an ended connection's entry, keeping its route among the
// last maxRetired.
func (r *Router) retire(conn string, c *routed) {
	delete(r.conns, conn)
	if _, ok := r.retired[conn]; ok {
		r.retired[conn] = c
		return
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.retired, old)
	}
	r.retired[conn] = c
	r.ring[r.next] = conn
	r.next = (r.next + 1) % maxRetired
}

// Feed takes the next bundle event. Connection events (http.*, ws.*,
// stdio.line) go to their connection's decoder; a proc.start opens the
// stdio channel of its process (its decoder gets it before the first line)
// and a proc.exit ends it (its decoder gets it); other kinds are ignored.
func (r *Router) Feed(ev *bundle.Event) {
	switch ev.Kind {
	case bundle.KindWSOpen:
		o := held(ev)
		delete(r.retired, ev.Conn) // the ring forgets it in its turn
		r.conns[ev.Conn] = &routed{open: &o}
	case bundle.KindHTTPRequest:
		c := &routed{}
		r.conns[ev.Conn] = c
		r.decide(c, ev, nil)
		r.feed(c, ev)
	case bundle.KindProcStart:
		// A stdio channel's process: held, as a ws.open is, until its first
		// line decides the route, whose decoder then gets it first (the
		// argv says what the process speaks). A new process on a channel
		// starts a new connection.
		o := held(ev)
		delete(r.retired, ev.Conn)
		r.conns[ev.Conn] = &routed{open: &o}
	case bundle.KindProcExit:
		if c := r.conns[ev.Conn]; c != nil {
			r.feed(c, ev)
			r.retire(ev.Conn, c)
		}
	case bundle.KindWSMessage, bundle.KindStdioLine, bundle.KindWSClose:
		if ev.Kind == bundle.KindWSMessage && cutMessage(ev) {
			// Its sender's stream ended inside it: the receiver never got
			// the message whole, so no decoder reads it as one (the bundle
			// keeps the bytes relayed, for the timeline).
			return
		}
		c := r.lookup(ev.Conn)
		if c == nil {
			c = &routed{}
			r.conns[ev.Conn] = c
		}
		if !c.decided {
			first := ev
			if ev.Kind == bundle.KindWSClose {
				first = nil
			}
			r.decide(c, c.open, first)
			if c.open != nil {
				r.feed(c, c.open)
				c.open = nil
			}
		}
		r.feed(c, ev)
		if ev.Kind == bundle.KindWSClose && wsEnded(c, ev) {
			r.retire(ev.Conn, c)
		}
	case bundle.KindHTTPResponse, bundle.KindHTTPBody, bundle.KindHTTPEnd:
		if c := r.conns[ev.Conn]; c != nil {
			r.feed(c, ev)
			if ev.Kind == bundle.KindHTTPEnd {
				delete(r.conns, ev.Conn) // exchange ids are not reused; keep memory flat
			}
		}
	}
}

// held is a copy of an opening event the router keeps until the
// connection's first message decides its route: with its own Attrs and
// Body.Data, which a bundle.Reader's event aliases only until its next
// event (a proc.start's argv, read after the next line, decides a stdio
// channel's dialect).
func held(ev *bundle.Event) bundle.Event {
	o := *ev
	o.Attrs = bytes.Clone(ev.Attrs)
	o.Body.Data = bytes.Clone(ev.Body.Data)
	return o
}

// cutMessage reports whether ev is a WebSocket message the recorder marked
// incomplete (attrs {"incomplete":true}): a peer's stream ended inside it.
func cutMessage(ev *bundle.Event) bool {
	return ev.Err != "" && bytes.Contains(ev.Attrs, []byte(`"incomplete":true`))
}

// wsEnded notes a ws.close and reports whether the connection is over: both
// sides closed, one side's stream ended without a close frame (the
// connection is dropped), or the recorder closed it at shutdown.
func wsEnded(c *routed, ev *bundle.Event) bool {
	switch ev.Dir {
	case bundle.DirClientToServer:
		c.closed[0] = true
	case bundle.DirServerToClient:
		c.closed[1] = true
	default:
		return true
	}
	return ev.Err != "" || c.closed[0] && c.closed[1]
}

func (r *Router) decide(c *routed, open, first *bundle.Event) {
	c.decided = true
	for _, rt := range r.routes {
		if rt.Match(open, first) {
			c.decoder, c.protocol = rt.Decoder, rt.Protocol
			return
		}
	}
}

func (r *Router) feed(c *routed, ev *bundle.Event) {
	if c.decoder != nil {
		c.decoder.Feed(ev, r.emit)
	}
}

// Stopping is a Decoder told that the server is being stopped (a signal
// sent to it) before the processes it runs exit: what they then leave
// unanswered is the stop's doing (JSONRPCDecoder: a Codex app-server's
// requests).
type Stopping interface {
	ServerStopping(at *bundle.Event)
}

// ServerStopping tells every decoder that is Stopping that the server is
// being stopped (at: the signal's proc.signal), until the next Stop.
func (r *Router) ServerStopping(at *bundle.Event) {
	seen := map[Decoder]bool{}
	for _, d := range r.order {
		if s, ok := d.(Stopping); ok && !seen[d] {
			seen[d] = true
			s.ServerStopping(at)
		}
	}
}

// WhyCut is the why of a Stop at the end of a bundle cut short (no
// trailer: a killed recorder): what the traffic did after the cut is not
// known, so no decoder judges what only the rest could have answered.
const WhyCut = "the bundle was cut short"

// Stop ends the open calls of every decoder (see Decoder.Stop); the ends
// it emits say why (Event.Why).
func (r *Router) Stop(at *bundle.Event, why string) {
	emit := func(ev *Event) {
		if ev.Kind == KindEnd && ev.Why == "" {
			ev.Why = why
		}
		r.emit(ev)
	}
	seen := map[Decoder]bool{}
	for _, d := range r.order {
		if !seen[d] {
			seen[d] = true
			d.Stop(at, why, emit)
		}
	}
}
