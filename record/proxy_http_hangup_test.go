package record

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// TestProxyHTTPEndSaysWhoLeft: a stream that ends early is recorded with
// the side that ended it. A client that hangs up after the first event
// (as Codex does once it has response.completed) is "client: gone before
// the body ended", not the upstream's fault; an upstream that drops its
// connection mid-stream is "upstream body: ...".
func TestProxyHTTPEndSaysWhoLeft(t *testing.T) {
	for _, tc := range []struct {
		name       string
		clientGoes bool
		want       string
	}{
		{"client hangs up", true, "client: gone before the body ended"},
		{"upstream cuts", false, "upstream body: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testkit.CheckLeaks(t)
			done := make(chan struct{})
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write([]byte("event: response.completed\ndata: {}\n\n"))
				w.(http.Flusher).Flush()
				if !tc.clientGoes {
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						conn.Close() // mid-stream: no terminating chunk
					}
					return
				}
				select {
				case <-r.Context().Done():
				case <-done:
				}
			}))
			defer upstream.Close()
			defer close(done)
			r := startRecording(t, upstream.URL, nil)

			conn, err := net.Dial("tcp", strings.TrimPrefix(r.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			conn.Write([]byte("GET /v1/responses HTTP/1.1\r\nHost: x\r\n\r\n"))
			br := bufio.NewReader(conn)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					if tc.clientGoes {
						t.Fatalf("reading the stream: %v", err)
					}
					break // the proxy broke the stream off, as the upstream did
				}
				if tc.clientGoes && strings.HasPrefix(line, "data: ") {
					break // the answer is in: hang up
				}
			}
			conn.Close()
			var end *bundle.Event
			for _, ev := range r.stop() {
				if ev.Kind == bundle.KindHTTPEnd {
					end = &ev
				}
			}
			if end == nil || !strings.HasPrefix(end.Err, tc.want) {
				t.Fatalf("http.end %+v, want its err to begin %q", end, tc.want)
			}
		})
	}
}
