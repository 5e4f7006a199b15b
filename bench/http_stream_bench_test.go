package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// streamBytes is the size of the streamed HTTP response: 1 GiB, as an agent's
// long event stream or a large download would be.
const streamBytes = 1 << 30

// streamBudget is the peak heap the recording proxy may reach while relaying
// it: memory stays flat, whatever the body's length.
const streamBudget = 64 << 20

// streamServer answers every request with streamBytes of JSON-ish text of
// unknown length (chunked), written in 32 KiB writes.
func streamServer() *httptest.Server {
	chunk := make([]byte, 32<<10)
	for i := range chunk {
		chunk[i] = "0123456789abcdefghij{\"x\":1}, \n"[i%30]
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for sent := 0; sent < streamBytes; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
}

// heapPeak samples the live heap until stop is called and returns the peak.
func heapPeak() (stop func() uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// BenchmarkHTTPStream fetches a 1 GiB streamed response directly and through
// the recording proxy, and reports the proxy's peak heap against its budget.
func BenchmarkHTTPStream(b *testing.B) {
	upstream := streamServer()
	defer upstream.Close()
	run := func(b *testing.B, base string) {
		client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
		defer client.CloseIdleConnections()
		buf := make([]byte, 256<<10)
		b.SetBytes(streamBytes)
		runtime.GC()
		stop := heapPeak()
		b.ResetTimer()
		for range b.N {
			res, err := client.Get(base + "/stream")
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.CopyBuffer(io.Discard, res.Body, buf)
			res.Body.Close()
			if err != nil || n != streamBytes {
				b.Fatalf("got %d bytes (%v), want %d", n, err, streamBytes)
			}
		}
		b.StopTimer()
		peak := stop()
		b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
		b.ReportMetric(float64(streamBudget)/float64(peak), "budget-ratio")
	}
	b.Run("direct", func(b *testing.B) { run(b, upstream.URL) })
	b.Run("recorded", func(b *testing.B) {
		u, stop := recordingProxy(b, upstream.URL)
		defer stop()
		run(b, u)
	})
}
