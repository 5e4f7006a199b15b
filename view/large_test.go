package view

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// largeEvents is the size of the large bundle the tests open.
const largeEvents = 100_000

var (
	largeOnce sync.Once
	largeDir  string
	largePath string
	largeErr  error
)

func TestMain(m *testing.M) {
	testkit.Main(m, &testkit.Options{Setup: func() (func(), error) {
		return func() {
			if largeDir != "" {
				os.RemoveAll(largeDir)
			}
		}, nil
	}})
}

// largeBundle writes, once per test binary, a passing idle run that polls
// the thread 2000 times (about 8k events of RPC traffic and projections) with
// server log lines between its events up to largeEvents events in all.
func largeBundle(t testing.TB) string {
	t.Helper()
	largeOnce.Do(func() {
		largeDir, largeErr = os.MkdirTemp("", "wireproof-view-large-")
		if largeErr != nil {
			return
		}
		largePath = filepath.Join(largeDir, "idle-long.zst")
		largeErr = writeLarge(largePath, largeEvents)
	})
	if largeErr != nil {
		t.Fatal(largeErr)
	}
	return largePath
}

func writeLarge(path string, n int) error {
	events, err := synth.Recorded(synth.MustBuild(synth.Options{Scenario: "idle", Polls: 2000}))
	if err != nil {
		return err
	}
	var h bundle.Header
	if err := json.Unmarshal(events[0].Body.Data, &h); err != nil {
		return err
	}
	var now int64
	w, err := bundle.Create(path, h, &bundle.WriterOptions{Clock: func() int64 { return now }})
	if err != nil {
		return err
	}
	// A log line of about 600 bytes: what the server wrote for each request.
	filler := strings.Repeat(`{"kind":"snapshot","projection":{"runs":[{"ordinal":1,"status":"running"}]}}`, 7)
	extra := n - len(events) // the header is one of s.Events; the trailer is not counted
	per := extra/(len(events)-1) + 1
	logs, prev := 0, int64(0)
	for i := 1; i < len(events); i++ {
		ev := events[i]
		for k := 0; k < per && logs < extra && ev.Kind != bundle.KindVerdict; k++ {
			now = prev + (ev.T-prev)*int64(k)/int64(per)
			line := fmt.Appendf(nil, `time=2026-11-30T01:38:41Z level=DEBUG msg="request served" n=%d path=/api/orchestration body=%s`, logs, filler)
			if _, err := w.Append(&bundle.Event{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStdout, Body: bundle.Text(line)}); err != nil {
				w.Close()
				return err
			}
			logs++
		}
		now, prev = ev.T, ev.T
		if _, err := w.Append(&ev); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// TestLargeBundleAPI: a 100k-event bundle opens with the verdict replay
// reaches, serves windows from anywhere in it, and the server keeps an index
// far smaller than the bundle's bytes.
func TestLargeBundleAPI(t *testing.T) {
	path := largeBundle(t)
	res, err := replay.ReplayFile(context.Background(), path, delivery.Options(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Events != largeEvents || !res.Reproduced || res.Verdict.Status != "passed" {
		t.Fatalf("the large bundle: %d events, status %s, reproduced %v\n%s", res.Events, res.Verdict.Status, res.Reproduced, res.Diff)
	}
	srcs, err := Resolve([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(context.Background(), srcs, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	o, err := s.bundle(s.IDs()[0])
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(o.ix.Events) != largeEvents || o.row.Status != res.Verdict.Status || o.row.Replay != replay.Reproduced {
		t.Fatalf("index: %d events, row %+v", len(o.ix.Events), o.row)
	}
	// Memory: what stays is summaries and spans, a fraction of the payloads
	// the bundle holds (res.Bytes, uncompressed), and a bounded amount per
	// event however long its payload.
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("bundle %d bytes uncompressed, %d events; index and states hold %d bytes (%.0f per event)", res.Bytes, res.Events, held, float64(held)/float64(res.Events))
	if held > res.Bytes/2 || held > 512*int64(res.Events) {
		t.Errorf("the opened bundle holds %d bytes: more than half the bundle's %d or 512 bytes per event", held, res.Bytes)
	}
	runtime.KeepAlive(o)

	ts := newServerFor(t, s)
	var w EventsResponse
	getJSON(t, ts+"/api/bundle/idle-long/events?around="+fmt.Sprint(largeEvents-1)+"&limit=100", &w)
	if w.Total != largeEvents || w.At != largeEvents-1 || w.Events[len(w.Events)-1].Seq != largeEvents-1 {
		t.Errorf("the end of the list: at %d, total %d", w.At, w.Total)
	}
	var ws EventsResponse
	getJSON(t, ts+"/api/bundle/idle-long/events?kind=ws&from=1000&limit=50", &ws)
	if ws.Matched < 8000 || ws.Matched > 20000 || len(ws.Events) != 50 || ws.From != 1000 {
		t.Errorf("ws window: matched %d, %d events from %d", ws.Matched, len(ws.Events), ws.From)
	}
	// A payload near the end is read from the file in full.
	var logs EventsResponse
	getJSON(t, ts+"/api/bundle/idle-long/events?kind=proc.log&around=90000&limit=1", &logs)
	logSeq := logs.Events[logs.At-logs.From].Seq
	var d EventDetail
	getJSON(t, ts+"/api/bundle/idle-long/event/"+fmt.Sprint(logSeq), &d)
	if d.Seq != logSeq || d.Body == nil || d.Body.Size < 500 || !strings.Contains(d.Body.Text, "request served") {
		t.Errorf("log line at seq %d: %+v", logSeq, d)
	}
}

func newServerFor(t *testing.T, s *Server) string {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestBrowserLargeBundle: the page opens a 100k-event bundle and its list
// scrolls to the end, with only the rows in view in the document.
func TestBrowserLargeBundle(t *testing.T) {
	if findChrome() == "" {
		testkit.Missing(t, testkit.EnvBrowserRequired, "no Chromium found: install Debian's chromium (apt-get install chromium; .ci/run does) or set WIREPROOF_CHROME")
	}
	path := largeBundle(t)
	srcs, err := Resolve([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, New(context.Background(), srcs, nil))
	br.run(chromedp.Navigate(br.base + "/b/idle-long"))
	br.waitJS("the first rows", `!!document.querySelector("#events .row.selected")`)
	count := eval[string](br, `document.getElementById("ev-count").textContent`)
	if count != fmt.Sprintf("%d events", largeEvents) {
		t.Errorf("count %q", count)
	}
	br.screenshot("large")
	// Scroll to the end: the last rows load and show; the document holds only
	// the rows around the view.
	eval[bool](br, `(() => { const l = document.getElementById("events"); l.scrollTop = l.scrollHeight; return true; })()`)
	br.waitJS("the last row", fmt.Sprintf(`!!document.querySelector('#events .row[data-seq="%d"]')`, largeEvents-1))
	rows := eval[int](br, `document.querySelectorAll("#events .row").length`)
	if rows > 200 {
		t.Errorf("%d rows in the document: the list is not virtualised", rows)
	}
	// Step to the middle of the run with a deep link.
	mid := largeEvents / 2
	br.run(chromedp.Navigate(fmt.Sprintf("%s/b/idle-long?seq=%d", br.base, mid)))
	br.waitJS("the linked row", fmt.Sprintf(`!!document.querySelector('#events .row.selected[data-seq="%d"]') && !!document.querySelector('#detail-event[data-seq="%d"][data-loaded="yes"]')`, mid, mid))
}
