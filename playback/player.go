package playback

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/wireproof/wireproof/internal/httphop"
	"github.com/wireproof/wireproof/internal/scrub"
)

// Options configure a Player. A nil *Options means the defaults.
type Options struct {
	// Timing says how recorded gaps are reproduced; the zero value keeps
	// them as recorded.
	Timing Timing
	// OnMiss, if set, is called with every miss as it happens, from the
	// goroutine serving the request (wireproof playback records them).
	OnMiss func(Miss)
	// MaxMessageSize is the WebSocket read limit, default 64 MiB.
	MaxMessageSize int64
	// MaxBody is the largest request body read for matching, default 64 MiB.
	MaxBody int64
	// Match, if set, decides which recorded HTTP exchange answers a live
	// request, in place of the default comparison (method, path, query and
	// body, ids unified): it is called with the recorded request and the
	// live one (each body readable once), in recorded order, unplayed
	// exchanges first, and the first it accepts is played. Ids are still
	// learned from an accepted pair whose values unify. WebSocket
	// connections and RPC calls keep the default matching.
	Match func(recorded, live *http.Request) bool
}

// Player serves a Recording to live clients. It is an http.Handler; it is
// safe for concurrent use, and one Player keeps one id mapping for all the
// clients it serves (a session). Close ends its WebSocket sessions.
type Player struct {
	rec  *Recording
	opts Options

	// ids is the learned id mapping; its mutex also guards everything
	// matching reads and writes (played flags, bindings).
	ids        *idMap
	httpReqs   []request
	httpPlayed []bool
	httpIndex  *shapeIndex
	wsReqs     []request
	wsPlayed   []bool
	scripts    []*script // per recorded conn, made when first matched

	mu       sync.Mutex // guards the report and sessions
	report   Report
	sessions map[*session]struct{}
	closed   bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a Player serving rec.
func New(rec *Recording, opts *Options) *Player {
	p := &Player{rec: rec, ids: newIDMap(), sessions: map[*session]struct{}{}}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.MaxMessageSize <= 0 {
		p.opts.MaxMessageSize = 64 << 20
	}
	if p.opts.MaxBody <= 0 {
		p.opts.MaxBody = 64 << 20
	}
	for _, x := range rec.Exchanges {
		p.httpReqs = append(p.httpReqs, newRequest(x.Method, x.URL, x.Body, x.Header.Get("Content-Type")))
	}
	p.httpPlayed = make([]bool, len(rec.Exchanges))
	p.httpIndex = newShapeIndex(p.httpReqs)
	for _, c := range rec.Conns {
		p.wsReqs = append(p.wsReqs, newRequest(http.MethodGet, c.URL, nil, ""))
	}
	p.wsPlayed = make([]bool, len(rec.Conns))
	p.scripts = make([]*script, len(rec.Conns))
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p
}

// ServeHTTP answers one request from the recording: a WebSocket upgrade or
// a plain HTTP request.
func (p *Player) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if httphop.IsWebSocketUpgrade(r) {
		p.serveWebSocket(w, r)
		return
	}
	p.serveHTTP(w, r)
}

// IDs returns the id pairs learned so far, recorded to live.
func (p *Player) IDs() map[string]string { return p.ids.Map() }

// Report returns what was played and missed so far, and what the recording
// holds that has not been played.
func (p *Player) Report() Report {
	p.ids.mu.Lock()
	var unplayed []Unplayed
	for i, x := range p.rec.Exchanges {
		if !p.httpPlayed[i] {
			unplayed = append(unplayed, Unplayed{Kind: "http", Seq: x.Seq, Request: x.Method + " " + x.URL.RequestURI()})
		}
	}
	for i, c := range p.rec.Conns {
		if !p.wsPlayed[i] {
			unplayed = append(unplayed, Unplayed{Kind: "websocket", Seq: c.Seq, Request: "GET " + c.URL.Path})
			continue
		}
		if sc := p.scripts[i]; sc != nil {
			for k, call := range sc.calls {
				if !sc.ever[k] {
					unplayed = append(unplayed, Unplayed{Kind: "rpc", Seq: call.seq, Request: call.summary()})
				}
			}
		}
	}
	p.ids.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.report
	r.Misses = append([]Miss{}, r.Misses...) // [] in JSON, not null
	r.Unplayed = append([]Unplayed{}, unplayed...)
	return r
}

// It returns the miss as it is kept and told (to the client, OnMiss, the
// report): its texts with credentials redacted and cut to maxMissText bytes
// (missText), so a client flooding playback with megabyte paths grows
// neither the report nor what is printed.
func (p *Player) addMiss(m Miss) Miss {
	m = m.told()
	p.mu.Lock()
	p.report.Missed++
	if len(p.report.Misses) < MaxListedMisses {
		p.report.Misses = append(p.report.Misses, m)
	}
	p.mu.Unlock()
	if p.opts.OnMiss != nil {
		p.opts.OnMiss(m)
	}
	return m
}

func (p *Player) played(repeated bool) {
	p.mu.Lock()
	if repeated {
		p.report.Repeated++
	} else {
		p.report.Played++
	}
	p.mu.Unlock()
}

// Close ends every WebSocket session (status 1001) and waits for them.
// Requests arriving afterwards get 503.
func (p *Player) Close() error {
	p.mu.Lock()
	p.closed = true
	ss := make([]*session, 0, len(p.sessions))
	for s := range p.sessions {
		ss = append(ss, s)
	}
	p.mu.Unlock()
	for _, s := range ss {
		s.c.Close(websocket.StatusGoingAway, "wireproof playback is stopping")
	}
	p.cancel()
	p.wg.Wait()
	return nil
}

func (p *Player) track(s *session) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.sessions[s] = struct{}{}
	p.wg.Add(1)
	return true
}

func (p *Player) untrack(s *session) {
	p.mu.Lock()
	delete(p.sessions, s)
	p.mu.Unlock()
	p.wg.Done()
}

func (p *Player) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// pick chooses the recorded request a live one plays: the first unplayed
// match in recorded order, else (repeated) the last played match. Only the
// indices in cands (ascending) are tried; nil means all. The caller holds
// p.ids.mu.
func (p *Player) pick(recs []request, played []bool, live *request, cands []int) (idx int, repeated bool) {
	n := len(recs)
	if cands != nil {
		n = len(cands)
	}
	at := func(k int) int {
		if cands != nil {
			return cands[k]
		}
		return k
	}
	for k := range n {
		i := at(k)
		if played[i] {
			continue
		}
		if b := p.ids.begin(); b.unifyRequest(&recs[i], live) {
			b.commit()
			played[i] = true
			return i, false
		}
	}
	for k := n - 1; k >= 0; k-- {
		i := at(k)
		if !played[i] {
			continue
		}
		if b := p.ids.begin(); b.unifyRequest(&recs[i], live) {
			b.commit()
			return i, true
		}
	}
	return -1, false
}

// shapeIndex narrows the recorded HTTP requests a live one is tried against
// to those of its method and path shape (ids, ports and times blanked), so
// a long recording is not scanned whole for every request. A recorded path
// holding a credential ([REDACTED]) matches any shape and is always tried.
type shapeIndex struct {
	byShape map[string][]int
	always  []int
}

func newShapeIndex(recs []request) *shapeIndex {
	x := &shapeIndex{byShape: map[string][]int{}}
	for i := range recs {
		if pathHasWildcard(recs[i].Path) {
			x.always = append(x.always, i)
			continue
		}
		k := shape(&recs[i])
		x.byShape[k] = append(x.byShape[k], i)
	}
	return x
}

// candidates are the indices worth trying for live, ascending; nil when
// the shape is unknown (then everything is tried).
func (x *shapeIndex) candidates(live *request) []int {
	c := x.byShape[shape(live)]
	if len(c) == 0 {
		return nil
	}
	if len(x.always) == 0 {
		return c
	}
	return slices.Sorted(slices.Values(append(slices.Clone(c), x.always...)))
}

func shape(r *request) string {
	var b strings.Builder
	b.WriteString(r.Method)
	for _, seg := range r.Path {
		b.WriteByte('/')
		b.WriteString(scrub.Time.ReplaceAllString(scrub.Text(seg.(string), ""), "<TIME>"))
	}
	return b.String()
}

func pathHasWildcard(path []any) bool {
	for _, seg := range path {
		if strings.Contains(seg.(string), redacted) {
			return true
		}
	}
	return false
}

// closest finds the recorded request most like live and explains the
// difference. The caller holds p.ids.mu.
func (p *Player) closest(kind string, recs []request, played []bool, seqs func(int) (uint64, string), live *request, summary string) Miss {
	m := Miss{Kind: kind, Request: summary}
	best, bestScore := -1, 1<<30
	for i := range recs {
		r := &recs[i]
		score := 0
		if r.Method != live.Method {
			score += 8
		}
		if !p.ids.begin().unify(r.Path, live.Path, "") {
			score += 4
		}
		if !p.ids.begin().unify(r.Query, live.Query, "") {
			score += 2
		}
		if b := p.ids.begin(); (r.Body == nil) != (live.Body == nil) || r.Body != nil && !b.unify(r.Body, live.Body, "") {
			score++
		}
		if played[i] {
			score *= 2
			score++
		}
		if score < bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return m
	}
	m.ClosestSeq, m.Closest = seqs(best)
	r := &recs[best]
	m.Diff = explain(*r, *live)
	if b := p.ids.begin(); b.unifyRequest(r, live) {
		m.Reason = "it matches, but was already played"
	} else if b.fail != "" {
		m.Reason = b.fail
	}
	return m
}
