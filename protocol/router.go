package protocol

import (
	"github.com/wireproof/wireproof/bundle"
)

// Route gives the connections that carry one protocol to its decoder.
type Route struct {
	Protocol Name
	// Match reports whether a connection carries the protocol, from the event
	// that opened it (ws.open or http.request; nil for stdio lines, which
	// have none) and its first message (a ws.message or stdio.line; nil when
	// the connection ended before one, or for HTTP, which is routed at its
	// request).
	Match func(open, first *bundle.Event) bool
	// Decoder decodes every connection routed here.
	Decoder Decoder
}

// Router routes each connection of a bundle to the first Route that matches
// what it carries, and feeds that decoder the connection's events. A
// connection that no route takes is ignored. Not safe for concurrent use.
type Router struct {
	routes []Route
	emit   Emit
	conns  map[string]*routed
	order  []Decoder // decoders in route order, for Stop
}

type routed struct {
	open     *bundle.Event // the ws.open held until the first message decides
	decoder  Decoder       // nil: undecided or ignored
	protocol Name
	decided  bool
}

// NewRouter returns a router over routes, tried in order, reporting to emit.
func NewRouter(routes []Route, emit Emit) *Router {
	r := &Router{routes: routes, emit: emit, conns: map[string]*routed{}}
	for _, rt := range routes {
		r.order = append(r.order, rt.Decoder)
	}
	return r
}

// Protocol says which protocol a connection was routed to ("" if none).
func (r *Router) Protocol(conn string) Name {
	if c := r.conns[conn]; c != nil {
		return c.protocol
	}
	return ""
}

// Feed takes the next bundle event. Connection events (http.*, ws.*,
// stdio.line) go to their connection's decoder; other kinds are ignored.
func (r *Router) Feed(ev *bundle.Event) {
	switch ev.Kind {
	case bundle.KindWSOpen:
		o := *ev
		r.conns[ev.Conn] = &routed{open: &o}
	case bundle.KindHTTPRequest:
		c := &routed{}
		r.conns[ev.Conn] = c
		r.decide(c, ev, nil)
		r.feed(c, ev)
	case bundle.KindWSMessage, bundle.KindStdioLine, bundle.KindWSClose:
		c := r.conns[ev.Conn]
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
	case bundle.KindHTTPResponse, bundle.KindHTTPBody, bundle.KindHTTPEnd:
		if c := r.conns[ev.Conn]; c != nil {
			r.feed(c, ev)
			if ev.Kind == bundle.KindHTTPEnd {
				delete(r.conns, ev.Conn) // exchange ids are not reused; keep memory flat
			}
		}
	}
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

// Stop ends the open calls of every decoder (see Decoder.Stop).
func (r *Router) Stop(at *bundle.Event, why string) {
	seen := map[Decoder]bool{}
	for _, d := range r.order {
		if !seen[d] {
			seen[d] = true
			d.Stop(at, why, r.emit)
		}
	}
}
