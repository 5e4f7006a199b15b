package view

import (
	"container/list"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/delivery"
)

//go:embed assets
var assets embed.FS

// DefaultCache is the number of bundles whose index a Server keeps in memory.
const DefaultCache = 4

// Options tune a Server. A nil *Options means the defaults.
type Options struct {
	// Cache is the number of opened bundles kept indexed; 0 means DefaultCache.
	// Opening another one drops the least recently used.
	Cache int
	// Delivery is the background-delivery scenario the bundles are judged
	// by; nil: delivery.Registered(), what verify records with.
	Delivery *delivery.Spec
	// Args, if set, are the arguments New's sources were resolved from:
	// the corpus lists them again (Resolve) on each request, so it shows
	// bundles added since and leaves out removed ones. An argument that
	// names no bundle any more lists none. Without Args the corpus is New's
	// sources, less those whose file is gone.
	Args []string
}

// Server serves the viewer's pages and its JSON API for a set of bundles. It
// is an http.Handler; it reads bundles only when asked, so creating one is
// cheap.
type Server struct {
	ctx   context.Context
	srcs0 []Source // New's
	args  []string // Options.Args
	mux   *http.ServeMux

	delivery *delivery.Spec // Options.Delivery

	listMu sync.Mutex
	ids    []string          // the last listing's ids, in order
	byID   map[string]Source // every bundle listed so far
	byKey  map[srcKey]string // their ids

	rowsMu sync.Mutex
	rows   map[string]corpusRow // by id: the corpus rows of the last listing

	mu    sync.Mutex
	cache int
	lru   *list.List               // of *opened, most recent first
	open  map[string]*list.Element // by id
}

// corpusRow is a bundle's corpus row, kept while its file holds what it was
// summarized from.
type corpusRow struct {
	src Source
	st  stamp
	row Row
}

// opened is a bundle read for its pages: the replay (verdict and
// observations) and the index of its events.
type opened struct {
	id   string
	src  Source
	st   stamp // the file's when it was read
	once sync.Once
	err  error
	an   *Analysis
	ix   *Index
	row  Row

	mu     sync.Mutex
	filter string  // the last filter's key
	match  []int32 // the events it matched
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// New returns a Server for srcs (see Resolve). ctx bounds the work requests
// start (replays, reads); cancel it to stop them.
//
// Every request answers from the files as they are then: a bundle's file is
// stated on each request, and what was read of it (its corpus row, its
// index) is used only while it is the same file with the same size and
// modification time; otherwise it is read again. A bundle whose file is gone
// is left out of the corpus and its pages answer 404.
func New(ctx context.Context, srcs []Source, opts *Options) *Server {
	s := &Server{ctx: ctx, srcs0: srcs, byID: map[string]Source{}, byKey: map[srcKey]string{}, rows: map[string]corpusRow{},
		cache: DefaultCache, lru: list.New(), open: map[string]*list.Element{}}
	if opts != nil && opts.Cache > 0 {
		s.cache = opts.Cache
	}
	s.listing() // srcs as given (s.args not set yet): no error
	if opts != nil {
		s.delivery, s.args = opts.Delivery, opts.Args
	}
	s.routes()
	return s
}

// IDs returns the bundles' ids, in the order of the last listing (New's
// sources until the corpus is asked for).
func (s *Server) IDs() []string {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	return append([]string(nil), s.ids...)
}

func (s *Server) routes() {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	page := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		b, _ := fs.ReadFile(static, "index.html")
		w.Write(b)
	}
	mux.HandleFunc("GET /{$}", page)
	mux.HandleFunc("GET /b/{id}", page)
	mux.HandleFunc("GET /diff", page)
	mux.HandleFunc("GET /api/bundles", s.apiBundles)
	mux.HandleFunc("GET /api/bundle/{id}", s.apiBundle)
	mux.HandleFunc("GET /api/bundle/{id}/events", s.apiEvents)
	mux.HandleFunc("GET /api/bundle/{id}/event/{seq}", s.apiEvent)
	mux.HandleFunc("GET /api/bundle/{id}/call/{n}", s.apiCall)
	mux.HandleFunc("GET /api/bundle/{id}/projection", s.apiProjection)
	mux.HandleFunc("GET /api/diff", s.apiDiff)
	mux.HandleFunc("GET /api/filter", apiFilter)
	s.mux = mux
}

// ServeHTTP serves the pages, the assets and the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'")
	s.mux.ServeHTTP(w, r)
}

// corpusRows lists the bundles and returns their rows: a bundle's row is
// kept while its file holds what it was summarized from, the others (new,
// changed) are replayed, GOMAXPROCS at a time; a bundle whose file is gone is
// left out.
func (s *Server) corpusRows() ([]Row, error) {
	srcs, ids, err := s.listing()
	if err != nil {
		return nil, err
	}
	s.rowsMu.Lock()
	defer s.rowsMu.Unlock()
	now := time.Now()
	got := make([]corpusRow, len(srcs))
	gone := make([]bool, len(srcs))
	var redo []int
	for i, src := range srcs {
		st, err := statBundle(src.Path)
		c, ok := s.rows[ids[i]]
		switch {
		case errors.Is(err, fs.ErrNotExist):
			gone[i] = true
		case err != nil: // stated again next time
			got[i] = corpusRow{src: src, row: Row{ID: ids[i], Name: src.Name, Path: src.Path, Iteration: src.Iteration,
				SuiteStatus: src.Status, Status: assert.StatusUnreadable, Error: err.Error()}}
		case ok && c.src == src && c.st.holds(st, now):
			got[i] = c
		default:
			got[i] = corpusRow{src: src, st: st}
			redo = append(redo, i)
		}
	}
	redoSrcs, redoIDs := make([]Source, len(redo)), make([]string, len(redo))
	for j, i := range redo {
		redoSrcs[j], redoIDs[j] = srcs[i], ids[i]
	}
	for j, row := range summarizeAll(s.ctx, redoSrcs, redoIDs, delivery.SpecOr(s.delivery)) {
		got[redo[j]].row = row
	}
	clear(s.rows)
	rows := make([]Row, 0, len(srcs))
	for i, c := range got {
		if !gone[i] {
			s.rows[ids[i]] = c
			rows = append(rows, c.row)
		}
	}
	return rows, nil
}

// bundle returns the opened bundle id, reading it on first use and again
// when its file no longer holds what was read. Only s.cache bundles stay
// open.
func (s *Server) bundle(id string) (*opened, error) {
	src, ok := s.source(id)
	if !ok {
		return nil, errNotFound{fmt.Sprintf("no bundle %q", id)}
	}
	st, err := statBundle(src.Path)
	s.mu.Lock()
	el, ok := s.open[id]
	if err != nil { // gone (404), or not to be stated
		if ok {
			s.lru.Remove(el)
			delete(s.open, id)
		}
		s.mu.Unlock()
		return nil, err
	}
	switch {
	case !ok:
		el = s.lru.PushFront(&opened{id: id, src: src, st: st})
		s.open[id] = el
		for s.lru.Len() > s.cache {
			old := s.lru.Back()
			s.lru.Remove(old)
			delete(s.open, old.Value.(*opened).id)
		}
	case el.Value.(*opened).src != src || !el.Value.(*opened).st.holds(st, time.Now()):
		el.Value = &opened{id: id, src: src, st: st} // changed since: read again
		s.lru.MoveToFront(el)
	default:
		s.lru.MoveToFront(el)
	}
	o := el.Value.(*opened)
	s.mu.Unlock()
	o.once.Do(func() { o.load(s.ctx, delivery.SpecOr(s.delivery)) })
	if o.err != nil {
		s.mu.Lock()
		if el, ok := s.open[id]; ok && el.Value == o {
			s.lru.Remove(el) // retried on the next request
			delete(s.open, id)
		}
		s.mu.Unlock()
		return nil, o.err
	}
	return o, nil
}

func (o *opened) load(ctx context.Context, spec delivery.Spec) {
	o.an, o.ix, o.err = read(ctx, o.src.Path, spec)
	if o.err != nil {
		return
	}
	o.row = Row{ID: o.id, Name: o.src.Name, Path: o.src.Path, Iteration: o.src.Iteration, SuiteStatus: o.src.Status}
	fillRow(&o.row, o.an.Result)
	o.row.Duration = o.ix.LastT
}

// errNotFound is an unknown id, seq or call.
type errNotFound struct{ msg string }

func (e errNotFound) Error() string { return e.msg }
