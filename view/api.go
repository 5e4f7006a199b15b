package view

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/filter"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/triage"
)

// MaxLimit caps the events one /events request returns.
const MaxLimit = 1000

// CorpusResponse is GET /api/bundles.
type CorpusResponse struct {
	Bundles []Row  `json:"bundles"`
	Rates   []Rate `json:"rates"`
}

// BundleResponse is GET /api/bundle/{id}: everything the bundle page shows
// except the events themselves, which come in windows.
type BundleResponse struct {
	Row      Row             `json:"row"`
	Header   bundle.Header   `json:"header"`
	Verdict  assert.Verdict  `json:"verdict"`  // replayed from the events
	Recorded *assert.Verdict `json:"recorded"` // what the live run wrote, if anything
	// ReplayDiff is the diff (-recorded +replayed) when they differ (replay.VerdictDiff).
	ReplayDiff       string               `json:"replayDiff,omitempty"`
	DecodeErrors     []replay.DecodeError `json:"decodeErrors,omitempty"`
	DecodeErrorCount int                  `json:"decodeErrorCount"`
	Events           int                  `json:"events"`
	Index            *Index               `json:"index"`
	Observations     []Observation        `json:"observations"`
	// FirstBad is where the failing check's value first went wrong (the
	// earliest observation from which it was the value the check failed
	// with), when that was before the deciding event.
	FirstBad *triage.FirstBad `json:"firstBad,omitempty"`
}

// EventsResponse is GET /api/bundle/{id}/events: a window of the events that
// match the filter.
type EventsResponse struct {
	Total   int     `json:"total"`   // events in the bundle
	Matched int     `json:"matched"` // events that match the filter
	From    int     `json:"from"`    // position of Events[0] among the matched
	Events  []Event `json:"events"`
	// At is the position among the matched of the event asked for with
	// around=SEQ (or of the first matched event after it), -1 without one.
	At int `json:"at"`
}

// ProjectionResponse is GET /api/bundle/{id}/projection: the parent thread as
// replay saw it at a moment.
type ProjectionResponse struct {
	// Index is the observation's position in BundleResponse.Observations,
	// -1 when the moment is before the first observation.
	Index       int          `json:"index"`
	Observation *Observation `json:"observation,omitempty"`
	State       *ThreadState `json:"state,omitempty"`
	// Previous is the state of the observation before (nil for the first).
	Previous *ThreadState `json:"previous,omitempty"`
}

// DiffResponse is GET /api/diff?a=ID&b=ID: triage.Diff's result and its
// stories aligned row by row.
type DiffResponse struct {
	A      string             `json:"a"`
	B      string             `json:"b"`
	Result *triage.DiffResult `json:"result"`
	Rows   []DiffRow          `json:"rows"`
}

// DiffRow pairs a step of A's story with one of B's. -1 means no step on
// that side. Kind is "same", "transient" or "divergence".
type DiffRow struct {
	A    int    `json:"a"`
	B    int    `json:"b"`
	Kind string `json:"kind"`
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var nf errNotFound
	var bad errBadRequest
	var format *bundle.FormatError
	var damaged *bundle.DamagedError
	switch {
	case errors.As(err, &nf), errors.Is(err, fs.ErrNotExist): // a bundle file removed since
		code = http.StatusNotFound
	case errors.As(err, &bad):
		code = http.StatusBadRequest
	case errors.As(err, &format), errors.As(err, &damaged):
		// The bundle cannot be read (not zstd, a broken line) or is
		// damaged: the request is fine, the file it names is not; not a
		// server fault.
		code = http.StatusUnprocessableEntity
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// errBadRequest is a malformed parameter.
type errBadRequest struct{ msg string }

func (e errBadRequest) Error() string { return e.msg }

func (s *Server) apiBundles(w http.ResponseWriter, r *http.Request) {
	rows, err := s.corpusRows()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, CorpusResponse{Bundles: rows, Rates: rates(rows)})
}

func (s *Server) apiBundle(w http.ResponseWriter, r *http.Request) {
	o, err := s.bundle(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	res := o.an.Result
	writeJSON(w, BundleResponse{Row: o.row, Header: res.Header, Verdict: res.Verdict, Recorded: res.Recorded, ReplayDiff: res.Diff,
		DecodeErrors: res.DecodeErrors, DecodeErrorCount: res.DecodeErrorCount, Events: len(o.ix.Events), Index: o.ix,
		Observations: orEmpty(o.an.Observations), FirstBad: o.an.FirstBad})
}

// orEmpty is obs, or an empty list for none (the page maps over it).
func orEmpty(obs []Observation) []Observation {
	if obs == nil {
		return []Observation{}
	}
	return obs
}

// Filter selects events of the list. Every set field must match.
type Filter struct {
	Kind    string // an event kind, or a family ("ws", "http")
	Conn    string
	Method  string // an RPC method or an HTTP method
	Status  string // an HTTP status ("404") or class ("4xx") of the event's exchange
	Outcome string // the outcome of a call the event belongs to
	// Q is a filter expression (docs/filter.md), the language of `inspect
	// --filter`: a bare word searches the summary, the RPC label and the
	// payload; operators select by kind, body, status, JSON path, flags...
	Q string

	expr *filter.Expr
}

func filterOf(q url.Values) (Filter, error) {
	f := Filter{Kind: q.Get("kind"), Conn: q.Get("conn"), Method: q.Get("method"), Status: q.Get("status"),
		Outcome: q.Get("outcome"), Q: strings.TrimSpace(q.Get("q"))}
	if f.Q != "" {
		e, err := filter.Parse(f.Q)
		if err != nil {
			return f, errBadRequest{err.Error()}
		}
		f.expr = e
	}
	return f, nil
}

func (f Filter) empty() bool {
	return f.Kind == "" && f.Conn == "" && f.Method == "" && f.Status == "" && f.Outcome == "" && f.Q == ""
}

// key identifies the filter, for the cache of the last one's matches.
func (f Filter) key() string {
	return strings.Join([]string{f.Kind, f.Conn, f.Method, f.Status, f.Outcome, f.Q}, "\x00")
}

func (f Filter) match(ix *Index, e *Event) bool {
	if f.Kind != "" && e.Kind != f.Kind && !strings.HasPrefix(e.Kind, f.Kind+".") {
		return false
	}
	if f.Conn != "" && e.Conn != f.Conn {
		return false
	}
	if f.Method != "" {
		ok := e.Exchange >= 0 && ix.HTTP[e.Exchange].Method == f.Method
		for _, c := range e.Calls {
			ok = ok || ix.Calls[c].Method == f.Method
		}
		if !ok {
			return false
		}
	}
	if f.Status != "" {
		if e.Exchange < 0 {
			return false
		}
		st := strconv.Itoa(ix.HTTP[e.Exchange].Status)
		if len(f.Status) == 3 && strings.HasSuffix(f.Status, "xx") {
			if st[:1] != f.Status[:1] {
				return false
			}
		} else if st != f.Status {
			return false
		}
	}
	if f.Outcome != "" && !slices.ContainsFunc(e.Calls, func(c int32) bool { return ix.Calls[c].Outcome == f.Outcome }) {
		return false
	}
	return true
}

// matches returns the positions of the events f matches (nil: all of them).
// The last filter's matches are kept, so scrolling through one costs nothing.
func (o *opened) matches(ctx context.Context, f Filter) ([]int32, error) {
	if f.empty() {
		return nil, nil
	}
	key := f.key()
	o.mu.Lock()
	defer o.mu.Unlock()
	if key == o.filter {
		return o.match, nil
	}
	m := []int32{}
	var err error
	if f.expr == nil {
		for i := range o.ix.Events {
			if f.match(o.ix, &o.ix.Events[i]) {
				m = append(m, int32(i))
			}
		}
	} else if m, err = o.search(ctx, f); err != nil {
		return nil, err
	}
	o.filter, o.match = key, m
	return m, nil
}

// search evaluates f's expression over every event with its decoded
// content: the index holds no payloads, so the bundle is read again (the
// payloads only when the expression reads them), each event given its
// exchange (by the index's spans), the calls the index's decode gave it, its
// flags and its summary.
func (o *opened) search(ctx context.Context, f Filter) ([]int32, error) {
	ix := o.ix
	needs := f.expr.Needs()
	tr := filter.NewTracker()
	tr.Answer = func(seq uint64) (int, http.Header) {
		i, ok := slices.BinarySearchFunc(ix.HTTP, seq, func(h HTTPSpan, s uint64) int { return cmpU(h.Seq, s) })
		if !ok {
			return 0, nil
		}
		return ix.HTTP[i].Status, nil
	}
	m := []int32{}
	test := func(i int, ev *bundle.Event) {
		e := &ix.Events[i]
		s := tr.Subject(ev) // the tracker follows every event
		if !f.match(ix, e) {
			return
		}
		s.Summary, s.Flags = e.Summary+" "+e.RPC, e.Flags
		for _, c := range e.Calls {
			s.Calls = append(s.Calls, filter.Call{Method: ix.Calls[c].Method, Outcome: ix.Calls[c].Outcome})
		}
		if f.expr.Match(&s) {
			m = append(m, int32(i))
		}
	}
	if len(ix.Events) > 0 && ix.Events[0].Seq == 0 {
		test(0, &bundle.Event{Kind: bundle.KindHeader})
	}
	err := scan(ctx, o.src.Path, ^uint64(0), func(_ uint64, k bundle.Kind) bool { return needs.Body }, func(ev *bundle.Event) bool {
		i, ok := slices.BinarySearchFunc(ix.Events, ev.Seq, func(e Event, s uint64) int { return cmpU(e.Seq, s) })
		if ok {
			test(i, ev)
		} else {
			tr.Subject(ev)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// FilterCheck is GET /api/filter?q=EXPR: whether the search box's
// expression parses, and if not where and what was expected there. It
// answers 200 either way (the events API answers 400 to an expression that
// does not parse), so the page checks what is typed before it searches.
type FilterCheck struct {
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
	Column   int    `json:"column,omitempty"`
	Expected string `json:"expected,omitempty"`
}

func apiFilter(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		writeJSON(w, FilterCheck{OK: true})
		return
	}
	_, err := filter.Parse(q)
	var se *filter.SyntaxError
	switch {
	case err == nil:
		writeJSON(w, FilterCheck{OK: true})
	case errors.As(err, &se):
		writeJSON(w, FilterCheck{Error: err.Error(), Column: se.Column, Expected: se.Expected})
	default:
		writeJSON(w, FilterCheck{Error: err.Error()})
	}
}

func intParam(q url.Values, name string, def int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errBadRequest{name + " must be a non-negative integer, got " + strconv.Quote(v)}
	}
	return n, nil
}

func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	o, err := s.bundle(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	from, err := intParam(q, "from", 0)
	if err != nil {
		writeError(w, err)
		return
	}
	limit, err := intParam(q, "limit", 200)
	if err != nil {
		writeError(w, err)
		return
	}
	limit = min(limit, MaxLimit)
	f, err := filterOf(q)
	if err != nil {
		writeError(w, err)
		return
	}
	m, err := o.matches(r.Context(), f)
	if err != nil {
		writeError(w, err)
		return
	}
	events := o.ix.Events
	n := len(events)
	if m != nil {
		n = len(m)
	}
	at := -1
	if q.Get("around") != "" {
		seq, err := strconv.ParseUint(q.Get("around"), 10, 64)
		if err != nil {
			writeError(w, errBadRequest{"around must be a seq"})
			return
		}
		at = searchSeq(events, m, seq)
		if at >= n {
			at = n - 1
		}
		from = max(at-limit/2, 0)
	}
	from = min(from, n)
	end := min(from+limit, n)
	out := make([]Event, 0, end-from)
	for i := from; i < end; i++ {
		if m != nil {
			out = append(out, events[m[i]])
		} else {
			out = append(out, events[i])
		}
	}
	writeJSON(w, EventsResponse{Total: len(events), Matched: n, From: from, Events: out, At: at})
}

// searchSeq is the position among the matched events (all when m is nil) of
// the first event with a seq at or after seq.
func searchSeq(events []Event, m []int32, seq uint64) int {
	if m == nil {
		i, _ := slices.BinarySearchFunc(events, seq, func(e Event, s uint64) int { return cmpU(e.Seq, s) })
		return i
	}
	i, _ := slices.BinarySearchFunc(m, seq, func(p int32, s uint64) int { return cmpU(events[p].Seq, s) })
	return i
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s *Server) apiEvent(w http.ResponseWriter, r *http.Request) {
	o, err := s.bundle(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	seq, err := strconv.ParseUint(r.PathValue("seq"), 10, 64)
	if err != nil || seq >= uint64(len(o.ix.Events)) || o.ix.Events[seq].Seq != seq {
		writeError(w, errNotFound{"no event with seq " + r.PathValue("seq")})
		return
	}
	d, err := readEvent(r.Context(), o.src.Path, o.ix.Events[seq])
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, d)
}

func (s *Server) apiCall(w http.ResponseWriter, r *http.Request) {
	o, err := s.bundle(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 || n >= len(o.ix.Calls) {
		writeError(w, errNotFound{"no call " + r.PathValue("n")})
		return
	}
	d, err := readCall(r.Context(), o.src.Path, o.ix.Calls[n])
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, d)
}

func (s *Server) apiProjection(w http.ResponseWriter, r *http.Request) {
	o, err := s.bundle(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	obs := o.an.Observations
	i := -1
	switch {
	case q.Get("obs") != "":
		n, err := strconv.Atoi(q.Get("obs"))
		if err != nil || n < 0 || n >= len(obs) {
			writeError(w, errNotFound{"no observation " + q.Get("obs")})
			return
		}
		i = n
	case q.Get("seq") != "":
		seq, err := strconv.ParseUint(q.Get("seq"), 10, 64)
		if err != nil {
			writeError(w, errBadRequest{"seq must be a seq"})
			return
		}
		// The last observation at or before seq.
		i, _ = slices.BinarySearchFunc(obs, seq+1, func(o Observation, s uint64) int { return cmpU(o.Seq, s) })
		i--
	default:
		writeError(w, errBadRequest{"projection needs seq=N or obs=I"})
		return
	}
	resp := ProjectionResponse{Index: i}
	if i >= 0 {
		ob := obs[i]
		resp.Observation = &ob
		resp.State = &o.an.States[ob.State]
		if i > 0 {
			resp.Previous = &o.an.States[obs[i-1].State]
		}
	}
	writeJSON(w, resp)
}

func (s *Server) apiDiff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, b := q.Get("a"), q.Get("b")
	sa, oka := s.source(a)
	sb, okb := s.source(b)
	if !oka || !okb {
		writeError(w, errNotFound{"diff needs two known bundles: a=ID&b=ID"})
		return
	}
	res, err := triage.Diff(r.Context(), sa.Path, sb.Path, nil)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, DiffResponse{A: a, B: b, Result: res, Rows: alignRows(res)})
}

// alignRows lays the two stories out row by row from the hunks triage.Diff
// found: between hunks the steps are the ones its alignment matched, pair by
// pair; inside a hunk each side's steps are listed against the other's.
func alignRows(res *triage.DiffResult) []DiffRow {
	type span struct {
		h    triage.StoryHunk
		kind string
	}
	var spans []span
	for _, h := range res.Transient {
		spans = append(spans, span{h, "transient"})
	}
	if d := res.Divergence; d != nil {
		spans = append(spans, span{d.StoryHunk, "divergence"})
	}
	slices.SortFunc(spans, func(x, y span) int { return x.h.AIndex - y.h.AIndex })
	na, nb := len(res.A.Story), len(res.B.Story)
	rows := []DiffRow{}
	i, j := 0, 0
	same := func(ai, bj int) {
		for i < ai || j < bj {
			row := DiffRow{A: -1, B: -1, Kind: "same"}
			if i < ai {
				row.A = i
				i++
			}
			if j < bj {
				row.B = j
				j++
			}
			rows = append(rows, row)
		}
	}
	for _, sp := range spans {
		same(sp.h.AIndex, sp.h.BIndex)
		for k := 0; k < max(sp.h.AEnd-sp.h.AIndex, sp.h.BEnd-sp.h.BIndex); k++ {
			row := DiffRow{A: -1, B: -1, Kind: sp.kind}
			if sp.h.AIndex+k < sp.h.AEnd {
				row.A = sp.h.AIndex + k
			}
			if sp.h.BIndex+k < sp.h.BEnd {
				row.B = sp.h.BIndex + k
			}
			rows = append(rows, row)
		}
		i, j = max(i, sp.h.AEnd), max(j, sp.h.BEnd)
	}
	same(na, nb)
	return rows
}
