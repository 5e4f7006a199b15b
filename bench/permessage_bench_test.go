package bench

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/wireproof/wireproof/internal/testkit"
)

// BenchmarkPerMessage measures the recording proxy per message and per
// request: b.N of them, with allocs/op, bytes/op and the process's CPU time
// per op (cpu-ns/op: client and server included, a figure the machine's
// load moves far less than the wall clock), each next to its baseline in
// the same process, so the difference is what the proxy adds. It is for
// profiling and is not one of bench/run.sh's rounds (run.sh runs the others):
//
//	go test -run '^$' -bench PerMessage -benchmem -count 5 -cpuprofile cpu.out ./bench/
//	go tool pprof -top -focus 'record\.' bench.test cpu.out
func BenchmarkPerMessage(b *testing.B) {
	b.Run("ws-oneway", func(b *testing.B) {
		sink := sinkServer()
		defer sink.Close()
		msgs := make([][]byte, 64)
		for i := range msgs {
			msgs[i] = message(i)
		}
		b.Run("direct", func(b *testing.B) { perMessageOneWay(b, sink.URL, msgs) })
		b.Run("recorded", func(b *testing.B) {
			u, stop := recordingProxy(b, sink.URL)
			defer stop()
			perMessageOneWay(b, u, msgs)
		})
	})
	b.Run("ws-echo", func(b *testing.B) {
		echo := echoServer()
		defer echo.Close()
		b.Run("direct", func(b *testing.B) { perMessageEcho(b, echo.URL) })
		b.Run("recorded", func(b *testing.B) {
			u, stop := recordingProxy(b, echo.URL)
			defer stop()
			perMessageEcho(b, u)
		})
	})
	b.Run("http-json", BenchmarkHTTPJSON)
}

// reportCPU reports the process's CPU time since start per op.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(testkit.CPUTime()-start)/float64(b.N), "cpu-ns/op")
}

// perMessageOneWay sends b.N messages one way, one write each, and waits
// until the sink has counted the last.
func perMessageOneWay(b *testing.B, base string, msgs [][]byte) {
	b.SetBytes(int64(len(msgs[0])))
	b.ReportAllocs()
	cpu := testkit.CPUTime()
	oneWay(b, base, msgs)
	reportCPU(b, cpu)
}

// perMessageEcho makes b.N echo round trips of a 1 KiB message.
func perMessageEcho(b *testing.B, base string) {
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, wsURL(base)+"/echo", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	msg := message(1)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testkit.CPUTime()
	for range b.N {
		if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		if _, got, err := c.Read(ctx); err != nil || len(got) != len(msg) {
			b.Fatalf("echo: %d bytes, %v", len(got), err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu)
	c.Close(websocket.StatusNormalClosure, "")
}

// perRequestJSON fetches base's JSON response (size bytes) b.N times from 8
// concurrent clients on 2 cores.
func perRequestJSON(b *testing.B, base string, size int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer client.CloseIdleConnections()
	b.SetBytes(int64(size))
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testkit.CPUTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := client.Get(base + "/api/threads")
			if err != nil {
				b.Error(err)
				return
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if n != int64(size) {
				b.Errorf("got %d bytes, want %d", n, size)
				return
			}
		}
	})
	b.StopTimer()
	reportCPU(b, cpu)
}
