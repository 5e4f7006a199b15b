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

	"github.com/wireproof/wireproof/internal/testkit"
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

// streamRounds is how many times BenchmarkHTTPStream fetches the stream each
// way in one run, alternating direct and recorded. One: bench/run.sh runs
// the benchmarks round after round and judges the spread of the rounds.
const streamRounds = 1

// BenchmarkHTTPStream fetches a 1 GiB streamed response directly, through
// the recording proxy and through httputil.ReverseProxy (a plain relay, for
// reference: what any proxy costs), and reports the recording proxy's peak
// heap against its budget. The fetches alternate, direct, recorded,
// ReverseProxy, for streamRounds rounds, and the best of each way counts.
func BenchmarkHTTPStream(b *testing.B) {
	upstream := streamServer()
	defer upstream.Close()
	u, stop := recordingProxy(b, upstream.URL)
	defer stop()
	rp := plainRelay(upstream.URL)
	defer rp.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	buf := make([]byte, 256<<10)
	fetch := func(base string) (mbps float64, peak uint64, cpu time.Duration) {
		runtime.GC()
		stopPeak := heapPeak()
		cpu0 := testkit.CPUTime()
		start := time.Now()
		res, err := client.Get(base + "/stream")
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, res.Body, buf)
		res.Body.Close()
		if err != nil || n != streamBytes {
			b.Fatalf("got %d bytes (%v), want %d", n, err, streamBytes)
		}
		d := time.Since(start)
		return streamBytes / d.Seconds() / 1e6, stopPeak(), testkit.CPUTime() - cpu0
	}
	var best [3]float64
	var peak [3]uint64
	var cpu [3]time.Duration
	for range streamRounds {
		for i, base := range []string{upstream.URL, u, rp.URL} {
			mbps, pk, c := fetch(base)
			best[i] = max(best[i], mbps)
			peak[i] = max(peak[i], pk)
			cpu[i] = min(cpu[i], c)
			if cpu[i] == 0 {
				cpu[i] = c
			}
		}
	}
	for i, name := range []string{"direct", "recorded", "reverseproxy"} {
		b.Run(name, func(b *testing.B) {
			b.ReportMetric(best[i], "MB/s")
			b.ReportMetric(float64(peak[i])/(1<<20), "peak-MB")
			b.ReportMetric(float64(streamBudget)/float64(peak[i]), "budget-ratio")
			b.ReportMetric(cpu[i].Seconds(), "cpu-s")
		})
	}
}
