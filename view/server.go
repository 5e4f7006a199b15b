package view

import (
	"container/list"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"regexp"
	"sync"

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
}

// Server serves the viewer's pages and its JSON API for a set of bundles. It
// is an http.Handler; it reads bundles only when asked, so creating one is
// cheap.
type Server struct {
	ctx  context.Context
	srcs []Source
	ids  []string
	byID map[string]int
	mux  *http.ServeMux

	delivery *delivery.Spec // Options.Delivery

	rowsOnce sync.Once
	rows     []Row

	mu    sync.Mutex
	cache int
	lru   *list.List               // of *opened, most recent first
	open  map[string]*list.Element // by id
}

// opened is a bundle read for its pages: the replay (verdict and
// observations) and the index of its events.
type opened struct {
	id   string
	src  Source
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
func New(ctx context.Context, srcs []Source, opts *Options) *Server {
	s := &Server{ctx: ctx, srcs: srcs, byID: map[string]int{}, cache: DefaultCache, lru: list.New(), open: map[string]*list.Element{}}
	if opts != nil && opts.Cache > 0 {
		s.cache = opts.Cache
	}
	if opts != nil {
		s.delivery = opts.Delivery
	}
	for i, src := range srcs {
		id := idUnsafe.ReplaceAllString(src.Name, "~")
		if id == "" {
			id = "bundle"
		}
		base := id
		for n := 2; ; n++ {
			if _, dup := s.byID[id]; !dup {
				break
			}
			id = fmt.Sprintf("%s-%d", base, n)
		}
		s.byID[id] = i
		s.ids = append(s.ids, id)
	}
	s.routes()
	return s
}

// IDs returns the bundles' ids, in input order.
func (s *Server) IDs() []string { return append([]string(nil), s.ids...) }

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

// corpusRows replays every bundle once, the first time the corpus is asked for.
func (s *Server) corpusRows() []Row {
	s.rowsOnce.Do(func() { s.rows = summarizeAll(s.ctx, s.srcs, s.ids, delivery.SpecOr(s.delivery)) })
	return s.rows
}

// bundle returns the opened bundle id, reading it on first use. Only
// s.cache bundles stay open.
func (s *Server) bundle(id string) (*opened, error) {
	i, ok := s.byID[id]
	if !ok {
		return nil, errNotFound{fmt.Sprintf("no bundle %q", id)}
	}
	s.mu.Lock()
	el, ok := s.open[id]
	if ok {
		s.lru.MoveToFront(el)
	} else {
		el = s.lru.PushFront(&opened{id: id, src: s.srcs[i]})
		s.open[id] = el
		for s.lru.Len() > s.cache {
			old := s.lru.Back()
			s.lru.Remove(old)
			delete(s.open, old.Value.(*opened).id)
		}
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
