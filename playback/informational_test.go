package playback

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInformationalAndTrailersPlayed: an upstream's 103 Early Hints before
// its answer and its response trailers, recorded through the real proxy,
// are served back by playback as the client saw them live: the 103 with
// its headers before the final response, the trailers after the body.
func TestInformationalAndTrailersPlayed(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Set("Trailer", "X-Checksum")
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "hello")
		w.Header().Set("X-Checksum", "abc123")
	})
	type seen struct {
		Early   []string // "103 </style.css>; rel=preload"
		Body    string
		Trailer string
		Status  int
	}
	get := func(url string) seen {
		var (
			mu sync.Mutex
			s  seen
		)
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			mu.Lock()
			defer mu.Unlock()
			s.Early = append(s.Early, http.StatusText(code)+" "+h.Get("Link"))
			return nil
		}}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "GET", url, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		res, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		mu.Lock()
		defer mu.Unlock()
		s.Body, s.Trailer, s.Status = string(b), res.Trailer.Get("X-Checksum"), res.StatusCode
		return s
	}
	var live seen
	path := recordSession(t, upstream, func(base string) { live = get(base + "/x") })
	want := seen{Early: []string{"Early Hints </style.css>; rel=preload"}, Body: "hello", Trailer: "abc123", Status: 200}
	if diff := cmp.Diff(want, live); diff != "" {
		t.Fatalf("through the recording proxy (-want +got):\n%s", diff)
	}
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	if diff := cmp.Diff(want, get(srv.URL+"/x")); diff != "" {
		t.Errorf("played back (-live +played):\n%s", diff)
	}
}

// TestHeadKeepsContentLength: a HEAD answered with the length of the body
// a GET would get is played back with that Content-Length, as recorded (it
// has no body whose ids could change its length).
func TestHeadKeepsContentLength(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "3")
		w.Header().Set("Content-Type", "text/html")
		if r.Method != http.MethodHead {
			io.WriteString(w, "hi\n")
		}
	})
	head := func(url string) string {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		res, err := (&http.Client{Transport: tr}).Head(url)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.Header.Get("Content-Length")
	}
	var live string
	path := recordSession(t, upstream, func(base string) { live = head(base + "/index.html") })
	if live != "3" {
		t.Fatalf("through the recording proxy: Content-Length %q, want 3", live)
	}
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	if got := head(srv.URL + "/index.html"); got != live {
		t.Errorf("played back HEAD: Content-Length %q, want %q as recorded", got, live)
	}
}
