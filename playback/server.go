package playback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/t3"
)

// Marks a recorded playback session holds besides its traffic.
const (
	// MarkMiss: a request playback could not answer. Body: Miss.
	MarkMiss = "playback.miss"
	// MarkReport: the session's report, written when it stops. Body: Report.
	MarkReport = "playback.report"
)

// ServeOptions configure Serve. A nil *ServeOptions means the defaults.
type ServeOptions struct {
	Options
	// Listen is the address to serve on, default "127.0.0.1:0".
	Listen string
	// Output, if set, is a bundle (which must not exist) the playback
	// session is recorded into through record's proxy, as any session
	// with a live server would be, with every miss and the final report
	// as marks.
	Output string
	// Header is the Output bundle's header (Started defaults to now).
	Header bundle.Header
}

// Server is a Player listening on a port, optionally recorded.
type Server struct {
	// URL is where clients connect, "http://127.0.0.1:PORT".
	URL    string
	Player *Player

	rec   *record.Recorder
	proxy *record.Server // the recording proxy clients talk to, with Output
	inner *http.Server   // the player itself
	done  chan error

	closeOnce sync.Once
	report    Report
	closeErr  error
}

// headerTimeout bounds how long a client may take to send a request's
// header, and idleTimeout how long a kept-alive connection may wait for its
// next request (as on the recording proxy's server): a client that sends
// half a header (slowloris) no longer holds its connection forever.
// Variables for the tests.
var (
	headerTimeout = 30 * time.Second
	idleTimeout   = 5 * time.Minute
)

// Serve serves rec until Close. ctx only bounds setting up.
func Serve(ctx context.Context, rec *Recording, opts *ServeOptions) (*Server, error) {
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	s := &Server{done: make(chan error, 1)}
	if o.Output != "" {
		h := o.Header
		if h.Started.IsZero() {
			h.Started = time.Now()
		}
		w, err := bundle.Create(o.Output, h, nil)
		if err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil, fmt.Errorf("%s: the file exists; a bundle is never overwritten: %w", o.Output, err)
			}
			return nil, err
		}
		// The client may send T3 credentials (tickets, tokens) as well as
		// generic ones.
		s.rec = record.New(w, &record.Options{TokenFields: t3.TokenFields, File: o.Output})
		onMiss := o.OnMiss
		o.OnMiss = func(m Miss) {
			s.mark(MarkMiss, m)
			if onMiss != nil {
				onMiss(m)
			}
		}
	}
	s.Player = New(rec, &o.Options)
	s.inner = &http.Server{Handler: s.Player, ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout}
	addr := o.Listen
	if s.rec != nil {
		addr = "127.0.0.1:0" // the player behind the recording proxy
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		s.abort(o.Output)
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	go func() { s.done <- s.inner.Serve(ln) }()
	s.URL = "http://" + ln.Addr().String()
	if s.rec != nil {
		proxy, err := record.NewProxy(s.rec, &record.ProxyOptions{Upstream: &url.URL{Scheme: "http", Host: ln.Addr().String()}})
		if err == nil {
			s.proxy, err = record.Listen(ctx, o.Listen, proxy)
		}
		if err != nil {
			s.inner.Close()
			<-s.done
			s.abort(o.Output)
			return nil, fmt.Errorf("listen on %s: %w", o.Listen, err)
		}
		s.URL = s.proxy.URL
	}
	return s, nil
}

// abort closes the recording of a Server that never started and removes
// its bundle at path: it holds nothing, and would block a retry with the
// same -o.
func (s *Server) abort(path string) {
	if s.rec != nil {
		s.rec.Close()
		os.Remove(path)
	}
}

func (s *Server) mark(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	s.rec.Emit(&bundle.Event{Kind: bundle.KindMark, Name: name, Body: bundle.Text(b)})
}

// Close stops serving (open WebSocket connections get 1001, streamed
// responses are cut when ctx ends), writes the report into the recording and
// closes it, and returns the report. Later calls return the same.
func (s *Server) Close(ctx context.Context) (Report, error) {
	s.closeOnce.Do(func() { s.report, s.closeErr = s.close(ctx) })
	return s.report, s.closeErr
}

func (s *Server) close(ctx context.Context) (Report, error) {
	var errs []error
	if s.proxy != nil {
		if err := s.proxy.Close(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, err)
		}
	}
	s.Player.Close()
	if err := s.inner.Shutdown(ctx); err != nil {
		s.inner.Close()
	}
	if err := <-s.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	rep := s.Player.Report()
	if s.rec != nil {
		s.mark(MarkReport, rep)
		errs = append(errs, s.rec.Close())
	}
	return rep, errors.Join(errs...)
}
