// Package bench measures the recording proxy against baselines in the same
// run; run.sh turns the results into ratios.
package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/wireproof/wireproof/bench/internal/ends"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/record"
)

// message returns a 1 KiB JSON text message (ends.Message).
func message(n int) []byte { return ends.Message(n) }

// wsURL turns an http URL into a ws one.
func wsURL(u string) string { return "ws" + strings.TrimPrefix(u, "http") }

// sinkServer counts messages and answers "done" with the count.
func sinkServer() *httptest.Server { return httptest.NewServer(ends.Sink()) }

// echoServer echoes every message.
func echoServer() *httptest.Server { return httptest.NewServer(ends.Echo()) }

// plainRelay is httputil.ReverseProxy, which relays a WebSocket connection
// as bytes once the upgrade is answered: what relaying alone costs, without
// recording, in the way the recording proxy relays (bytes, not messages).
func plainRelay(upstream string) *httptest.Server {
	u, _ := url.Parse(upstream)
	return httptest.NewServer(httputil.NewSingleHostReverseProxy(u))
}

// recordingProxy starts a recording proxy writing a real bundle in a temp dir.
// The returned stop closes it and returns the bundle's path.
func recordingProxy(b *testing.B, upstream string) (proxyURL string, stop func() string) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof bench"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	rec := record.New(w, nil)
	u, _ := url.Parse(upstream)
	p, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: u})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := record.Listen(context.Background(), "", p)
	if err != nil {
		b.Fatal(err)
	}
	return srv.URL, func() string {
		srv.Close(context.Background())
		if err := rec.Close(); err != nil {
			b.Fatal(err)
		}
		return path
	}
}

// wsOneWayMessages is how many 1 KiB messages BenchmarkWSOneWay sends each
// way.
const wsOneWayMessages = 32 << 10

// BenchmarkWSOneWay sends 1 KiB messages one way: directly, through a plain
// relay (httputil.ReverseProxy, which relays bytes as the recording proxy
// does) and through the recording proxy, each round until the sink has
// counted the last message. Two clients:
//
//   - interactive (MB/s): one message per write, as a browser or an agent's
//     client sends them (coder/websocket's Write);
//   - busy (busy-MB/s): messages back to back, many per write (batchClient),
//     which shows what recording costs per byte when nothing else does: a
//     relay that reads many messages at once spares the sink a wake-up per
//     message, which the interactive figure credits to the relay.
//
// A round sends wsOneWayMessages each way with each client, in
// wsOneWayBlocks blocks that take the three endpoints in turn (the first
// of each block rotating), and each endpoint reports its bytes over its
// blocks' summed time: a burst of load, or the machine's switch between a
// sink woken per message and one that reads many at once (which moves a
// direct connection's figure between rounds by up to 2x on a two-core VM),
// then lands on every endpoint's blocks rather than on all of one's.
// bench/run.sh runs the benchmarks round after round and takes the median
// and spread of each way's ratio to its neighbours.
func BenchmarkWSOneWay(b *testing.B) {
	sink := sinkServer()
	defer sink.Close()
	msgs := make([][]byte, 256)
	for i := range msgs {
		msgs[i] = message(i)
	}
	relay := plainRelay(sink.URL)
	defer relay.Close()
	u, stop := recordingProxy(b, sink.URL)
	defer stop()
	names := []string{"direct", "relay", "recorded"}
	bases := []string{sink.URL, relay.URL, u}
	interactive := make([]time.Duration, len(bases))
	busy := make([]time.Duration, len(bases))
	for blk := range wsOneWayBlocks {
		for j := range bases {
			i := (blk + j) % len(bases)
			interactive[i] += oneWayBlock(b, bases[i], msgs, false)
			busy[i] += oneWayBlock(b, bases[i], msgs, true)
		}
	}
	mbps := func(d time.Duration) float64 {
		return float64(wsOneWayBlocks*wsOneWayBlockMessages*len(msgs[0])) / d.Seconds() / 1e6
	}
	for i, name := range names {
		b.Run(name, func(b *testing.B) {
			b.ReportMetric(mbps(interactive[i]), "MB/s")
			b.ReportMetric(mbps(busy[i]), "busy-MB/s")
		})
	}
}

// wsOneWayBlocks is how many blocks BenchmarkWSOneWay splits each way's
// messages into, of wsOneWayBlockMessages each.
const (
	wsOneWayBlocks        = 5
	wsOneWayBlockMessages = wsOneWayMessages / wsOneWayBlocks
)

// oneWayBlock sends wsOneWayBlockMessages messages on a new
// connection, one per write or batched, and returns the time until the
// sink has counted the last.
func oneWayBlock(b *testing.B, base string, msgs [][]byte, batched bool) time.Duration {
	const n = wsOneWayBlockMessages
	var got []byte
	start := time.Now()
	if batched {
		c := dialBatch(b, base, "/sink")
		defer c.conn.Close()
		start = time.Now()
		for i := range n {
			c.send(b, msgs[i%len(msgs)])
		}
		c.send(b, []byte("done"))
		c.flush(b)
		got = c.read(b)
	} else {
		ctx := context.Background()
		c, _, err := websocket.Dial(ctx, wsURL(base)+"/sink", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseNow()
		start = time.Now()
		for i := range n {
			if err := c.Write(ctx, websocket.MessageText, msgs[i%len(msgs)]); err != nil {
				b.Fatal(err)
			}
		}
		c.Write(ctx, websocket.MessageText, []byte("done"))
		if _, got, err = c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	d := time.Since(start)
	if string(got) != strconv.Itoa(n) {
		b.Fatalf("sink counted %s messages, want %d", got, n)
	}
	return d
}

// oneWay sends b.N messages (msgs in turn) to the sink at base, as text, and
// waits for the sink's count.
func oneWay(b *testing.B, base string, msgs [][]byte) {
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, wsURL(base)+"/sink", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	b.SetBytes(int64(len(msgs[0])))
	b.ResetTimer()
	for i := range b.N {
		if err := c.Write(ctx, websocket.MessageText, msgs[i%len(msgs)]); err != nil {
			b.Fatal(err)
		}
	}
	c.Write(ctx, websocket.MessageText, []byte("done"))
	_, got, err := c.Read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if string(got) != strconv.Itoa(b.N) {
		b.Fatalf("sink counted %s messages, want %d", got, b.N)
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// wsEchoTrips is how many round trips one block of BenchmarkWSEcho makes each
// way, and wsEchoBlocks how many blocks it alternates.
const (
	wsEchoTrips  = 400
	wsEchoBlocks = 5
)

// BenchmarkWSEcho measures echo round trips of 1 KiB messages, directly and
// through the recording proxy, and reports the p50 and p99 of each: one round
// (bench/run.sh runs many). Within it the two alternate block after block on
// connections kept open, and the percentiles are taken over all blocks'
// trips (2,000 each way): a burst of load on a shared machine then lands on
// both ways alike.
func BenchmarkWSEcho(b *testing.B) {
	echo := echoServer()
	defer echo.Close()
	msg := message(1)
	u, stop := recordingProxy(b, echo.URL)
	defer stop()
	ctx := context.Background()
	bases := []string{echo.URL, u}
	conns := make([]*websocket.Conn, len(bases))
	for i, base := range bases {
		c, _, err := websocket.Dial(ctx, wsURL(base)+"/echo", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseNow()
		conns[i] = c
	}
	lat := make([][]time.Duration, len(bases))
	for range wsEchoBlocks {
		for i, c := range conns {
			for range wsEchoTrips {
				start := time.Now()
				if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
					b.Fatal(err)
				}
				if _, _, err := c.Read(ctx); err != nil {
					b.Fatal(err)
				}
				lat[i] = append(lat[i], time.Since(start))
			}
		}
	}
	for _, c := range conns {
		c.Close(websocket.StatusNormalClosure, "")
	}
	for i, name := range []string{"direct", "recorded"} {
		b.Run(name, func(b *testing.B) {
			l := lat[i]
			slices.Sort(l)
			b.ReportMetric(float64(l[len(l)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(l[len(l)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkHTTPJSON fetches 20 KiB JSON responses from 8 concurrent clients
// through httputil.ReverseProxy (no recording) and the recording proxy: the
// same answer every time (a poll), and, as a reference, a different answer
// every time (ends.JSONDistinct), which the bundle writer's memo of repeated
// payloads cannot spare.
func BenchmarkHTTPJSON(b *testing.B) {
	body := jsonBody()
	for _, up := range []struct {
		suffix string
		h      http.Handler
	}{{"", ends.JSON(body)}, {"-distinct", ends.JSONDistinct(body)}} {
		upstream := httptest.NewServer(up.h)
		b.Run("reverseproxy"+up.suffix, func(b *testing.B) {
			u, _ := url.Parse(upstream.URL)
			rp := httputil.NewSingleHostReverseProxy(u)
			rp.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
			srv := httptest.NewServer(rp)
			defer srv.Close()
			perRequestJSON(b, srv.URL, len(body))
		})
		b.Run("recorded"+up.suffix, func(b *testing.B) {
			u, stop := recordingProxy(b, upstream.URL)
			defer stop()
			perRequestJSON(b, u, len(body))
		})
		upstream.Close()
	}
}

// jsonBody is a 20 KiB JSON list of threads (ends.JSONBody).
func jsonBody() []byte { return ends.JSONBody() }

// jsonServer serves body as application/json, with its length, at every path.
func jsonServer(body []byte) *httptest.Server { return httptest.NewServer(ends.JSON(body)) }

// BenchmarkCompression records two streams and reports the bundle's
// compression ratio (uncompressed NDJSON bytes / file bytes):
//
//	projection: a ~20 KiB JSON state fetched after each of 1000 small events,
//	  each fetch differing a little from the one before, as a verifier polls;
//	unique: 10000 small RPC chunks with unique ids and varying text.
func BenchmarkCompression(b *testing.B) {
	b.Run("projection", func(b *testing.B) {
		for range b.N {
			b.ReportMetric(compressionRatio(b, projectionStream), "ratio")
		}
	})
	b.Run("unique", func(b *testing.B) {
		for range b.N {
			b.ReportMetric(compressionRatio(b, uniqueStream), "ratio")
		}
	})
}

func compressionRatio(b *testing.B, stream func(emit func(*bundle.Event))) float64 {
	b.Helper()
	path := filepath.Join(b.TempDir(), "c.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof bench"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	rec := record.New(w, nil)
	stream(func(ev *bundle.Event) {
		if _, err := rec.Emit(ev); err != nil {
			b.Fatal(err)
		}
	})
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	r, err := bundle.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var ev bundle.Event
	for r.Next(&ev) == nil {
	}
	tr := r.Trailer()
	if tr == nil {
		b.Fatal("no trailer")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return float64(tr.Bytes) / float64(fi.Size())
}

func projectionStream(emit func(*bundle.Event)) {
	type thread struct {
		ID, Title, State string
		Messages         int
		Updated          string
	}
	threads := make([]thread, 120)
	for i := range threads {
		threads[i] = thread{ID: fmt.Sprintf("thr_%08x", i*7919), Title: fmt.Sprintf("background task %d", i), State: "idle", Messages: i % 9, Updated: "2026-01-01T00:00:00.000Z"}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for i := range 1000 {
		emit(&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeText,
			Body: bundle.Text(fmt.Appendf(nil, `{"_tag":"Chunk","requestId":"3","values":[{"type":"thread.updated","sequence":%d,"threadId":"%s"}]}`, i, threads[i%len(threads)].ID))})
		t := &threads[rng.IntN(len(threads))]
		t.Messages++
		t.State = []string{"idle", "running", "waiting"}[rng.IntN(3)]
		t.Updated = fmt.Sprintf("2026-01-01T00:%02d:%02d.%03dZ", i/60%60, i%60, rng.IntN(1000))
		sb.Reset()
		sb.WriteString(`{"snapshotSequence":` + strconv.Itoa(i) + `,"threads":[`)
		for j, th := range threads {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"id":"%s","title":"%s","state":"%s","messages":%d,"updatedAt":"%s"}`, th.ID, th.Title, th.State, th.Messages, th.Updated)
		}
		sb.WriteString(`]}`)
		conn := "h" + strconv.Itoa(i+1)
		emit(&bundle.Event{Kind: bundle.KindHTTPRequest, Conn: conn, Method: "GET", URL: "/api/orchestration/snapshot", Header: http.Header{"Authorization": {"Bearer [REDACTED]"}}})
		emit(&bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: 200, Header: http.Header{"Content-Type": {"application/json"}}})
		emit(&bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(sb.String()))})
		emit(&bundle.Event{Kind: bundle.KindHTTPEnd, Conn: conn, Size: int64(sb.Len())})
	}
}

var words = strings.Fields(`the agent reads a file and writes a patch then runs the tests again while
the background task waits for its parent to deliver the result of the nested child`)

func uniqueStream(emit func(*bundle.Event)) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 10000 {
		var delta strings.Builder
		for range 3 + rng.IntN(6) {
			delta.WriteString(words[rng.IntN(len(words))])
			delta.WriteByte(' ')
		}
		emit(&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws" + strconv.Itoa(1+i%4), Dir: bundle.DirServerToClient, Type: bundle.TypeText,
			Body: bundle.Text(fmt.Appendf(nil, `{"_tag":"Chunk","requestId":"%d","values":[{"type":"thread.message.delta","threadId":"thr_%08x","messageId":"msg_%016x","sequence":%d,"delta":%q}]}`,
				i%13, rng.Uint32(), rng.Uint64(), i, delta.String()))})
	}
}
