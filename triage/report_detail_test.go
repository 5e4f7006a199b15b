package triage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// TestReportShowsWholeCauseChain: an Exit whose typed error has a cause that
// has a cause keeps its root in the report, however long the messages above
// it are.
func TestReportShowsWholeCauseChain(t *testing.T) {
	long := strings.Repeat("the projection could not be loaded because a lower layer failed; ", 4)
	cause := fmt.Sprintf(`[{"_tag":"Fail","error":{"_tag":"OrchestrationV2GetThreadProjectionError","message":%q,`+
		`"cause":{"name":"ProjectionRepositoryError","message":%q,`+
		`"cause":{"_tag":"ProjectionStoreThreadNotFoundError","message":"thread t-404 is not in the store"}}}}]`, long, long)
	path := writeBundle(t,
		&bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
		&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText,
			Body: bundle.Text([]byte(`{"_tag":"Request","id":"1","tag":"orchestration.getThreadProjection","payload":{"threadId":"t-404"},"headers":[]}`))},
		&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeText,
			Body: bundle.Text([]byte(`{"_tag":"Exit","requestId":"1","exit":{"_tag":"Failure","cause":` + cause + `}}`))},
	)
	page := html.UnescapeString(report(t, load(t, path, nil)))
	want := "Fail OrchestrationV2GetThreadProjectionError: " + long + "\n" +
		"  caused by ProjectionRepositoryError: " + long + "\n" +
		"  caused by ProjectionStoreThreadNotFoundError: thread t-404 is not in the store"
	if !strings.Contains(page, want) {
		t.Errorf("the report does not show the whole cause chain %q", want)
	}
}

func TestCauseChainShapes(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"_tag":"A","message":"m"}`, "Fail A: m"},
		{`{"name":"A","message":"m","cause":"root text"}`, "Fail A: m\n  caused by root text"},
		{`"a string defect"`, "Fail a string defect"},
		{`42`, "Fail 42"},
		{`{"message":"only a message","cause":null}`, "Fail only a message"},
		{`{"k":"v"}`, `Fail {"k":"v"}`},
	} {
		if got := strings.Join(chainLines("Fail", json.RawMessage(tc.raw)), "\n"); got != tc.want {
			t.Errorf("chainLines(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
	// A chain deeper than the bound ends with a note, not a stack overflow.
	deep := `{"_tag":"Root"}`
	for range maxChainDepth + 5 {
		deep = `{"_tag":"E","message":"m","cause":` + deep + `}`
	}
	lines := chainLines("Die", json.RawMessage(deep))
	if len(lines) != maxChainDepth+1 || !strings.Contains(lines[len(lines)-1], "deeper than") {
		t.Errorf("a %d-deep chain gave %d lines ending %q", maxChainDepth+5, len(lines), lines[len(lines)-1])
	}
}

// TestReportFailingEventInFull: the failing row's summary is one clipped line;
// under it the whole event can be expanded.
func TestReportFailingEventInFull(t *testing.T) {
	var v assert.Verdict
	raw, err := os.ReadFile(strings.TrimSuffix(liveFailing, ".zst") + ".verdict.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	c, err := bundle.ReadFile(liveFailing, nil)
	if err != nil {
		t.Fatal(err)
	}
	var line []byte
	for i := range c.Events {
		if c.Events[i].Seq == v.Failure.Seq {
			line = bundle.AppendEvent(nil, &c.Events[i])
		}
	}
	if len(line) < 1000 {
		t.Fatalf("the failing event is %d bytes: too short to show that nothing is clipped", len(line))
	}
	page := report(t, load(t, liveFailing, nil))
	m := regexp.MustCompile(fmt.Sprintf(`(?s)<details><summary>seq %d in full</summary><pre>(.*?)</pre></details>`, v.Failure.Seq)).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no expandable full event under the failing row %d", v.Failure.Seq)
	}
	var got, want bytes.Buffer
	if err := json.Compact(&got, []byte(html.UnescapeString(m[1]))); err != nil {
		t.Fatalf("the full event is not the bundle's JSON line: %v", err)
	}
	json.Compact(&want, line)
	if got.String() != want.String() {
		t.Errorf("the expanded event differs from the bundle's line:\n got %.300s\nwant %.300s", got.String(), want.String())
	}
}

func TestReportPlainRecordingNeedsNoVerdict(t *testing.T) {
	// What wireproof record writes: no scenario, no run mark, no verdict.
	path := filepath.Join(t.TempDir(), "plain.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test", Manifest: bundle.Manifest{Options: map[string]string{"upstream": "http://127.0.0.1:1"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(&bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	page := report(t, load(t, path, nil))
	if strings.Contains(page, "did not finish writing one") {
		t.Error("a plain recording is reported as a live run that did not finish writing its verdict")
	}
	if !strings.Contains(page, "plain recording") {
		t.Error("the report does not say it is a plain recording")
	}
}

// TestReportAnchorNotUnderStickyHeader opens the report at #seq-N in a real
// browser and checks that the row it jumps to is below the timeline's sticky
// header, not hidden under it.
func TestReportAnchorNotUnderStickyHeader(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		testkit.Missing(t, testkit.EnvBrowserRequired, "no chromium or chrome on PATH (.ci/run installs chromium): cannot check the layout in a browser")
	}
	tl := load(t, liveFailing, nil)
	seq := tl.Entries[len(tl.Entries)*3/4].Seq // far enough down that the page must scroll
	page := report(t, tl)
	// The report has no scripts; the test's copy gets one that measures.
	probe := `<script>window.addEventListener("load",()=>setTimeout(()=>{` +
		`const row=document.getElementById("seq-` + fmt.Sprint(seq) + `");` +
		`const th=row.closest("table").querySelector("th");` +
		`document.body.setAttribute("data-probe",JSON.stringify({row:row.getBoundingClientRect().top,header:th.getBoundingClientRect().bottom,scrolled:window.scrollY}));` +
		`},100));</script></body>`
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(strings.Replace(page, "</body>", probe, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--virtual-time-budget=5000",
		"--window-size=1200,700", "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+file+fmt.Sprintf("#seq-%d", seq)).Output()
	if err != nil && len(out) == 0 {
		// The browser itself could not run here (no display libraries, a
		// sandbox it cannot set up): that says nothing about the page.
		testkit.Missing(t, testkit.EnvBrowserRequired, fmt.Sprintf("%s could not run: %v", browser, err))
	}
	m := regexp.MustCompile(`data-probe="([^"]*)"`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the browser did not run the probe; DOM:\n%.500s", out)
	}
	var probeResult struct{ Row, Header, Scrolled float64 }
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &probeResult); err != nil {
		t.Fatal(err)
	}
	if probeResult.Scrolled == 0 {
		t.Fatalf("the page did not scroll to #seq-%d: %+v", seq, probeResult)
	}
	if probeResult.Row < probeResult.Header {
		t.Errorf("row seq-%d starts at %.1fpx, under the sticky header that ends at %.1fpx", seq, probeResult.Row, probeResult.Header)
	}
}
