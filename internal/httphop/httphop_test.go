package httphop

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRemove(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   http.Header
		want http.Header
	}{
		{"none", http.Header{"Content-Type": {"application/json"}}, http.Header{"Content-Type": {"application/json"}}},
		{"every hop-by-hop name", http.Header{
			"Connection": {"keep-alive"}, "Proxy-Connection": {"x"}, "Keep-Alive": {"timeout=5"},
			"Proxy-Authenticate": {"Basic"}, "Proxy-Authorization": {"Basic eA=="}, "Te": {"trailers"},
			"Trailer": {"X-Sum"}, "Transfer-Encoding": {"chunked"}, "Upgrade": {"h2c"}, "Accept": {"*/*"},
		}, http.Header{"Accept": {"*/*"}}},
		{"named by Connection, in any case", http.Header{
			"Connection": {"x-hop, X-Other ,"}, "X-Hop": {"1"}, "X-Other": {"2"}, "X-Kept": {"3"},
		}, http.Header{"X-Kept": {"3"}}},
		// A name not in canonical form is not the canonical header, as
		// with h.Del.
		{"non-canonical keys stay", http.Header{"connection": {"close"}, "Te": {"trailers"}}, http.Header{"connection": {"close"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Remove(tc.in)
			if d := cmp.Diff(tc.want, tc.in); d != "" {
				t.Errorf("Remove (-want +got):\n%s", d)
			}
		})
	}
}

// BenchmarkRemove removes the hop-by-hop headers of a proxied request's
// header, as the recording proxy does twice per exchange.
func BenchmarkRemove(b *testing.B) {
	h := http.Header{"Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}, "Content-Type": {"application/json"}, "Date": {"Tue, 01 Dec 2026 18:05:47 GMT"}}
	b.ReportAllocs()
	for b.Loop() {
		Remove(h) // none is hop-by-hop: h stays as it is
	}
	if len(h) != 4 {
		b.Fatalf("Remove removed end-to-end headers: %v", h)
	}
}
