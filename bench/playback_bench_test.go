package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/wireproof/wireproof/playback"
)

// The playback figures: how fast a bundle is served back to a client,
// against the direct baselines the proxy's figures use (the echo server, the
// JSON server), measured in the same run.

// sessionLen is the number of echo round trips of one recorded WebSocket
// session (and of one direct session).
const sessionLen = 500

// echoSession runs sessionLen echo round trips of 1 KiB messages on one
// connection to base.
func echoSession(b *testing.B, base string) {
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, wsURL(base)+"/echo", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	for i := range sessionLen {
		if err := c.Write(ctx, websocket.MessageText, message(i)); err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// playbackServer serves the bundle at path with no gaps.
func playbackServer(b *testing.B, path string) *playback.Server {
	b.Helper()
	rec, err := playback.Load(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := playback.Serve(context.Background(), rec, &playback.ServeOptions{Options: playback.Options{Timing: playback.Timing{Fast: true}}})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

// BenchmarkPlaybackWS measures WebSocket messages per second: echo round
// trips of 1 KiB JSON messages against the echo server directly, and against
// playback of a recorded session of the same. The messages are Effect RPC
// Chunks, so the session is played as Effect RPC: a client Chunk is decoded
// for its tag (it answers no call, so nothing is matched or compared), and
// each recorded server message is sent, as recorded, after the client
// message recorded before it.
func BenchmarkPlaybackWS(b *testing.B) {
	echo := echoServer()
	defer echo.Close()
	run := func(b *testing.B, base string) {
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			echoSession(b, base)
		}
		b.ReportMetric(float64(2*sessionLen*b.N)/time.Since(start).Seconds(), "msgs/s")
	}
	b.Run("direct", func(b *testing.B) { run(b, echo.URL) })
	b.Run("playback", func(b *testing.B) {
		u, stop := recordingProxy(b, echo.URL)
		echoSession(b, u)
		path := stop()
		srv := playbackServer(b, path)
		defer srv.Close(context.Background())
		run(b, srv.URL)
		if rep := srv.Player.Report(); len(rep.Misses) != 0 {
			b.Fatalf("playback missed: %s", rep.Summary())
		}
	})
}

// httpPages is the number of distinct requests recorded for the HTTP figure.
const httpPages = 64

// BenchmarkPlaybackHTTP measures HTTP requests per second from 8 concurrent
// clients fetching 20 KiB JSON pages: directly from the JSON server, and
// from playback of a recording of every page (each request matched by path
// and query among the recorded ones).
func BenchmarkPlaybackHTTP(b *testing.B) {
	body := []byte(`{"threads":[` + repeatJSON(280) + `]}`)
	upstream := jsonServer(body)
	defer upstream.Close()
	run := func(b *testing.B, base string) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
		defer client.CloseIdleConnections()
		var n atomic.Int64
		b.SetParallelism(4) // 8 clients on 2 cores
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				page := n.Add(1) % httpPages
				res, err := client.Get(base + "/api/threads?page=" + strconv.FormatInt(page, 10))
				if err != nil {
					b.Error(err)
					return
				}
				got, _ := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK || got != int64(len(body)) {
					b.Errorf("page %d: status %d, %d bytes; want 200 and %d", page, res.StatusCode, got, len(body))
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	}
	b.Run("direct", func(b *testing.B) { run(b, upstream.URL) })
	b.Run("playback", func(b *testing.B) {
		u, stop := recordingProxy(b, upstream.URL)
		for page := range httpPages {
			res, err := http.Get(u + "/api/threads?page=" + strconv.Itoa(page))
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		srv := playbackServer(b, stop())
		defer srv.Close(context.Background())
		run(b, srv.URL)
	})
}

func repeatJSON(n int) string {
	b := make([]byte, 0, n*80)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"thr_%010d","title":"a thread","state":"idle","messages":12}`, i)
	}
	return string(b)
}
