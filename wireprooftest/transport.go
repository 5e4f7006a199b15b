package wireprooftest

import (
	"net/http"
	"net/url"
)

// RoundTripper returns a transport that sends every request to base (the
// URL Record, Playback or RecordOnce returned), whatever scheme and host it
// names, keeping its path and query: for code under test that builds the
// real server's URLs itself and takes an *http.Client instead of a base
// URL. next carries the rewritten request (nil means
// http.DefaultTransport); WebSocket upgrades go through it too.
func RoundTripper(base string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	u, err := url.Parse(base)
	return &rewrite{base: u, err: err, next: next}
}

type rewrite struct {
	base *url.URL
	err  error
	next http.RoundTripper
}

func (t *rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.err != nil {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, t.err
	}
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host = t.base.Scheme, t.base.Host
	out.Host = ""
	return t.next.RoundTrip(out)
}
