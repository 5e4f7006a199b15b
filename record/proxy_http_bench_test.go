package record

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// BenchmarkRecordExchange records what the proxy records of one HTTP
// exchange, a GET answered with 20 KiB of JSON (bench's body), without the
// network: the http.request, http.response, http.body and http.end events
// through the recorder into a real bundle, as serveHTTP and relaySmall emit
// them. cpu-ns/op is the CPU of the whole process per exchange, the bundle
// writer's compressor included; it is the recording's share of an
// exchange's CPU in bench/independent.
func BenchmarkRecordExchange(b *testing.B) {
	body := []byte(`{"threads":[` + strings.Repeat(`{"id":"thr_0123456789","title":"a thread","state":"idle","messages":12},`, 280))
	body = append(body[:len(body)-1], "]}"...)
	w, err := bundle.Create(filepath.Join(b.TempDir(), "b.zst"), bundle.Header{Tool: "bench"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	rec := New(w, nil)
	p, err := NewProxy(rec, &ProxyOptions{Upstream: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}})
	if err != nil {
		b.Fatal(err)
	}
	reqHeader := http.Header{"Accept-Encoding": {"gzip"}, "User-Agent": {"Go-http-client/1.1"}}
	resHeader := http.Header{"Content-Type": {"application/json"}, "Content-Length": {"20173"}, "Date": {"Tue, 01 Dec 2026 18:05:47 GMT"}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	cpu0 := testkit.CPUTime()
	for b.Loop() {
		ex := p.newExchange()
		ex.emit(&bundle.Event{Kind: bundle.KindHTTPRequest, Conn: ex.id, Method: http.MethodGet, URL: "/api/threads", Header: reqHeader})
		ex.emit(&bundle.Event{Kind: bundle.KindHTTPResponse, Conn: ex.id, Status: http.StatusOK, Header: resHeader})
		rb := newBodyRecorder(ex, bundle.DirServerToClient, resHeader)
		rb.write(body)
		rb.close(true)
		ex.end(int64(len(body)), nil)
	}
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(testkit.CPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
