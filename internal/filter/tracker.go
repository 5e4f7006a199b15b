package filter

import (
	"net/http"

	"github.com/wireproof/wireproof/bundle"
)

// Tracker follows a bundle's events in order and gives each the context an
// expression reads: the HTTP exchange or WebSocket connection it belongs to
// and the flag it carries by itself. Feed it every event, in seq order.
type Tracker struct {
	// Answer, when set, gives the status and response headers of the
	// exchange whose request is at requestSeq (a caller that has read the
	// bundle once knows them), so ~c and ~hs take the request's events too.
	Answer func(requestSeq uint64) (status int, respHeader http.Header)

	conns map[string]*connInfo
	flags Flagger
}

type connInfo struct {
	method, url        string
	status             int
	header, respHeader http.Header
}

// NewTracker returns a Tracker at the start of a bundle.
func NewTracker() *Tracker {
	return &Tracker{conns: map[string]*connInfo{}}
}

// Subject is ev with its context. The Subject holds ev's body without
// copying it; Summary, Calls and the flags of the decoders are the
// caller's to add.
func (t *Tracker) Subject(ev *bundle.Event) Subject {
	s := Subject{Seq: ev.Seq, T: ev.T, Kind: string(ev.Kind), Conn: ev.Conn, Dir: string(ev.Dir),
		Body: ev.Body.Data, Binary: ev.Body.Binary, Method: ev.Method, URL: ev.URL, Status: ev.Status}
	switch ev.Kind {
	case bundle.KindHTTPRequest, bundle.KindWSOpen:
		c := &connInfo{method: ev.Method, url: ev.URL, header: ev.Header}
		if t.Answer != nil && ev.Kind == bundle.KindHTTPRequest {
			c.status, c.respHeader = t.Answer(ev.Seq)
		}
		t.conns[ev.Conn] = c
		s.Header = ev.Header
		if ev.Kind == bundle.KindWSOpen {
			s.Method = ""
		}
	case bundle.KindHTTPResponse:
		if c := t.conns[ev.Conn]; c != nil {
			c.status, c.respHeader = ev.Status, ev.Header
		}
		s.Status = ev.Status
	}
	if c := t.conns[ev.Conn]; c != nil && ev.Conn != "" {
		if s.URL == "" {
			s.URL = c.url
		}
		if s.Status == 0 {
			s.Status = c.status
		}
		s.Header, s.RespHeader = c.header, c.respHeader
		if ev.Kind != bundle.KindWSOpen && (ev.Kind == bundle.KindHTTPRequest || isHTTP(ev.Kind)) && s.Method == "" {
			s.Method = c.method
		}
	}
	if ev.Kind == bundle.KindGateRelease {
		s.Status = ev.Status
	}
	if f, _ := t.flags.Flag(ev); f != "" {
		s.Flags = append(s.Flags, f)
	}
	if ev.Kind == bundle.KindHTTPEnd {
		delete(t.conns, ev.Conn)
	}
	return s
}

// Flagger gives each event the flag it carries by itself. Feed it every
// event, in seq order; the zero Flagger is at the start of a bundle.
type Flagger struct {
	signalled map[string]bool // processes wireproof has sent a signal
}

// Flag is the flag ev carries by itself and a few words of why, "" when
// none.
func (f *Flagger) Flag(ev *bundle.Event) (flag, why string) {
	switch ev.Kind {
	case bundle.KindProcSignal:
		if f.signalled == nil {
			f.signalled = map[string]bool{}
		}
		f.signalled[ev.Conn] = true
	case bundle.KindProcStart:
		delete(f.signalled, ev.Conn)
	}
	return eventFlag(ev, f.signalled[ev.Conn])
}

func isHTTP(k bundle.Kind) bool {
	return k == bundle.KindHTTPResponse || k == bundle.KindHTTPBody || k == bundle.KindHTTPEnd
}
