package view

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/replay/synth"
)

// The browser tests drive a real headless Chromium against the viewer served
// on loopback. They skip only when no Chromium can be found (.ci/run installs
// Debian's chromium); WIREPROOF_CHROME names a browser binary explicitly.

var (
	shotsOnce sync.Once
	shotsDir  string
)

// screenshots is the directory the tests write their screenshots to
// (WIREPROOF_SCREENSHOTS, else a new temp dir), logged once.
func screenshots(t *testing.T) string {
	shotsOnce.Do(func() {
		shotsDir = os.Getenv("WIREPROOF_SCREENSHOTS")
		if shotsDir == "" {
			shotsDir, _ = os.MkdirTemp("", "wireproof-view-shots-")
		}
		os.MkdirAll(shotsDir, 0o755)
	})
	t.Logf("screenshots in %s", shotsDir)
	return shotsDir
}

func findChrome() string {
	if p := os.Getenv("WIREPROOF_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is one Chromium tab on the viewer, failing the test on any
// console error, uncaught exception or failed load the page reports.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string

	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T, s *Server) *browser {
	t.Helper()
	path := findChrome()
	if path == "" {
		testkit.Missing(t, testkit.EnvBrowserRequired, "no Chromium found: install Debian's chromium (apt-get install chromium; .ci/run does) or set WIREPROOF_CHROME")
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1440, 900),
		chromedp.Flag("force-device-scale-factor", "1"))
	// A guard against a wedged browser, not a timing assertion: every wait
	// below is on a DOM condition, and only the test binary's deadline ends
	// one that never comes true.
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Minute)
	}
	base, cancelBase := context.WithDeadline(context.Background(), deadline.Add(-15*time.Second))
	actx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		cancelBase()
	})
	b := &browser{t: t, ctx: ctx, base: ts.URL}
	// Start the browser, then listen to its console before any page loads:
	// console errors and warnings, uncaught exceptions and the browser log
	// (failed loads, CSP violations) all fail the test.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	msgs := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				b.problem(m.String() + " " + m.URL)
			}
		}
	}()
	t.Cleanup(func() {
		cancelCtx()
		<-done
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range b.problems {
			t.Errorf("the page reported: %s", p)
		}
	})
	return b
}

func (b *browser) problem(s string) {
	b.mu.Lock()
	b.problems = append(b.problems, s)
	b.mu.Unlock()
}

func (b *browser) run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatal(err)
	}
}

// click clicks the first element css selects, as a user's mouse would. A
// page that renders the element again between the query and the click
// (its node gone: "Could not find node with given id") is clicked again
// on the new one.
func (b *browser) click(css string) {
	b.t.Helper()
	var err error
	for range 10 {
		if err = chromedp.Do(b.ctx, chromedp.Click(chromedp.CSS(css))); err == nil || !strings.Contains(err.Error(), "Could not find node") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		b.t.Fatalf("clicking %s: %v", css, err)
	}
}

// eval evaluates js and returns its result decoded into out.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitJS waits until js evaluates to true: what the page shows, not time,
// decides when a test goes on.
func (b *browser) waitJS(what, js string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0))); err != nil {
		b.t.Fatalf("waiting for %s (%s): %v", what, js, err)
	}
}

func (b *browser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	p := filepath.Join(screenshots(b.t), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", p)
}

// setSelect picks value in the <select> with id and fires its change event.
func (b *browser) setSelect(id, value string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const s = document.getElementById(%q); s.value = %q; s.dispatchEvent(new Event("change")); return s.value; })()`, id, value)
	got := eval[string](b, js)
	if got != value {
		b.t.Fatalf("select #%s has no option %q", id, value)
	}
}

// suiteDir copies golden live bundles into a suite directory with its
// results.json:
// the idle scenario repeated with different outcomes, so the rates mean
// something.
func suiteDir(t *testing.T) (string, []string) {
	t.Helper()
	names := []string{"idle", "idle-duplicate-notification", "idle-never-acknowledged", "idle-lost-child-result", "active", "native", "nested", "nested-fail-gate"}
	dir := t.TempDir()
	var entries []suiteEntry
	for i, n := range names {
		bundle := filepath.Join(dir, n+".zst")
		copyFile(t, filepath.Join(goldenLive, n+".zst"), bundle)
		entries = append(entries, suiteEntry{Iteration: i + 1, Bundle: bundle})
	}
	b, _ := json.Marshal(entries)
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, names
}

func TestBrowserCorpus(t *testing.T) {
	dir, names := suiteDir(t)
	srcs, err := Resolve([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, New(context.Background(), srcs, nil))
	br.run(chromedp.Navigate(br.base + "/"))
	br.waitJS("the corpus table", `document.querySelectorAll("#corpus tbody tr").length > 0`)
	rows := eval[[]string](br, `[...document.querySelectorAll("#corpus tbody tr")].map(r => r.dataset.id)`)
	if len(rows) != len(names) {
		t.Fatalf("corpus lists %d bundles %v, want %d", len(rows), rows, len(names))
	}
	text := eval[string](br, `document.querySelector("#corpus").innerText`)
	for _, want := range []string{"single-notification", "delivery-acknowledged", "reproduced", "passed", "failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("corpus table does not show %q:\n%s", want, text)
		}
	}
	// idle ran 4 times, 3 failed: the rate says so, and per check.
	rates := eval[[]string](br, `[...document.querySelectorAll("#rates tbody tr")].map(r => [...r.cells].map(c => c.textContent).join("|"))`)
	for _, want := range []string{"idle|3/4|75%", "single-notification|1/4|25%", "active|0/1|0%"} {
		if !slices.Contains(rates, want) {
			t.Errorf("rates do not show %q: %q", want, rates)
		}
	}
	br.screenshot("corpus")

	// Filter: typing narrows the rows.
	br.run(chromedp.SendKeys(chromedp.CSS("#corpus-filter"), "duplicate"))
	br.waitJS("one row left", `document.querySelectorAll("#corpus tbody tr").length === 1`)
	text = eval[string](br, `document.querySelector("#corpus tbody tr").dataset.id`)
	if text != "idle-duplicate-notification" {
		t.Errorf("filtered row is %q", text)
	}
	// Sorting by duration puts the rows in order.
	eval[bool](br, `(() => { const q = document.getElementById("corpus-filter"); q.value = ""; return q.dispatchEvent(new Event("input")); })()`)
	br.waitJS("all rows back", fmt.Sprintf(`document.querySelectorAll("#corpus tbody tr").length === %d`, len(names)))
	br.setSelect("corpus-status", "passed")
	br.waitJS("passed only", `[...document.querySelectorAll("#corpus tbody tr .badge")].filter(b => b.textContent === "failed").length === 0`)
}

// openLive opens page on a viewer of the golden live corpus.
func openLive(t *testing.T, page string) *browser {
	t.Helper()
	return openDir(t, goldenLive, page)
}

// openDir opens page on a viewer of the bundles in dir.
func openDir(t *testing.T, dir, page string) *browser {
	t.Helper()
	srcs, err := Resolve([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	br := newBrowser(t, New(context.Background(), srcs, nil))
	br.run(chromedp.Navigate(br.base + page))
	return br
}

func TestBrowserBundle(t *testing.T) {
	br := openLive(t, "/b/idle-duplicate-notification")
	// The failing event (seq 138, single-notification) is selected, highlighted
	// and inside the list's visible area when the page opens.
	br.waitJS("the failing row", `!!document.querySelector("#events .row.failing.selected")`)
	seq := eval[string](br, `document.querySelector("#events .row.failing.selected").dataset.seq`)
	if seq != "138" {
		t.Fatalf("the highlighted row is seq %s, want the failing event 138", seq)
	}
	inView := eval[bool](br, `(() => { const r = document.querySelector("#events .row.failing").getBoundingClientRect(), l = document.getElementById("events").getBoundingClientRect(); return r.top >= l.top && r.bottom <= l.bottom; })()`)
	if !inView {
		t.Error("the failing row is not in the visible part of the list")
	}
	br.waitJS("its details", `!!document.querySelector('#detail-event[data-seq="138"] .jt')`)
	// The bundle is named by its file and its run's start, not by its name
	// alone (two runs' idle-1 differ in both).
	if got, want := eval[string](br, `document.getElementById("bundle-path").textContent`), filepath.Join(goldenLive, "idle-duplicate-notification.zst"); got != want {
		t.Errorf("bundle path %q, want %q", got, want)
	}
	if started := eval[string](br, `document.getElementById("bundle-started").textContent`); !strings.HasPrefix(started, "20") {
		t.Errorf("bundle start %q, want the run's start time", started)
	}
	br.screenshot("bundle")

	// Filters narrow the list: kind=http leaves only http events.
	br.setSelect("ev-kind", "http")
	br.waitJS("only http rows", `document.getElementById("events").dataset.filter === "kind=http" && (() => { const rows = [...document.querySelectorAll("#events .row")]; return rows.length > 0 && rows.every(r => r.querySelector(".kind").textContent.startsWith("http.")); })()`)
	count := eval[string](br, `document.getElementById("ev-count").textContent`)
	if !strings.Contains(count, " of 151 events") {
		t.Errorf("count after filtering: %q", count)
	}
	br.setSelect("ev-kind", "")
	br.run(chromedp.SendKeys(chromedp.CSS("#ev-q"), "launchThread"))
	br.waitJS("search narrows", `document.getElementById("events").dataset.filter === "q=launchThread" && (() => { const rows = [...document.querySelectorAll("#events .row")]; return rows.length > 0 && rows.length < 10 && rows.every(r => r.textContent.includes("launchThread")); })()`)

	// Clicking an RPC call shows its payload: the launchThread request.
	br.click(`#events .row .rpc`)
	br.waitJS("the loaded details with the call link", `!!document.querySelector('#detail-event[data-loaded="yes"] a.call-link')`)
	br.click(`#detail-event a.call-link`)
	br.waitJS("the payload tree", `(() => { const p = document.querySelector("#detail-call #call-payload .jt"); return !!p && p.textContent.includes("threadId"); })()`)
	method := eval[string](br, `document.querySelector("#detail-call .detail-title").textContent`)
	if !strings.Contains(method, "orchestration.launchThread") {
		t.Errorf("call details title %q", method)
	}
	br.screenshot("call")

	// Clicking a call's span on the waterfall shows it too: the subscription.
	pos := eval[[]float64](br, `(() => {
		const wf = document.getElementById("waterfall").waterfall;
		const c = wf.ix.calls.find((c) => c.method === "orchestration.subscribeThread");
		const p = wf.spanRect(c.index);
		return [p.x, p.y, c.index];
	})()`)
	br.run(chromedp.MouseClickXY(pos[0], pos[1]))
	br.waitJS("the subscription's details", fmt.Sprintf(`!!document.querySelector('#detail-call[data-call="%d"][data-loaded="yes"] #call-payload .jt')`, int(pos[2])))
	title := eval[string](br, `document.querySelector("#detail-call .detail-title").textContent`)
	if !strings.Contains(title, "orchestration.subscribeThread") || !strings.Contains(title, "interrupted") {
		t.Errorf("waterfall click shows %q", title)
	}
}

func TestBrowserProjection(t *testing.T) {
	br := openLive(t, "/b/idle-duplicate-notification")
	br.waitJS("the failing row", `!!document.querySelector("#events .row.failing.selected")`)
	// Picking a point on the timeline (the time axis of the waterfall) shows
	// the projection then: first early in the run, then late.
	clickAt := func(frac float64) {
		pos := eval[[]float64](br, fmt.Sprintf(`(() => { const r = document.getElementById("waterfall").getBoundingClientRect(); return [r.left + 96 + (r.width - 104) * %f, r.top + 10]; })()`, frac))
		br.run(chromedp.MouseClickXY(pos[0], pos[1]))
	}
	clickAt(0.6)
	// The projection and its changes are read in the same evaluation that
	// finds them: the pane may render again between two evaluations.
	br.waitJS("a projection", `(() => { const c = document.querySelector("#projection #changes"); if (!c) return false; window.__snap = [document.getElementById("projection").dataset.obs, c.innerText]; return true; })()`)
	snap := eval[[]string](br, `window.__snap`)
	first, firstChanges := snap[0], snap[1]
	clickAt(0.97)
	br.waitJS("a later projection", fmt.Sprintf(`(() => { const p = document.getElementById("projection"); if (!p || p.dataset.obs === %q || !document.getElementById("changes")) return false; window.__snap = [p.dataset.obs, p.innerText]; return true; })()`, first))
	snap = eval[[]string](br, `window.__snap`)
	later, laterText := snap[0], snap[1]
	if !strings.Contains(laterText, "acknowledged") || !strings.Contains(laterText, "ACK:") {
		t.Errorf("the last projection does not show the acknowledged delivery:\n%s", laterText)
	}
	br.screenshot("projection")
	// Stepping back shows the observation before, with what changed.
	br.click("#obs-prev")
	br.waitJS("the previous observation", fmt.Sprintf(`(() => { const p = document.getElementById("projection"); const c = document.getElementById("changes"); if (!p || p.dataset.obs !== String(%s - 1) || !c) return false; window.__snap = [c.innerText]; return true; })()`, later))
	prevChanges := eval[[]string](br, `window.__snap`)[0]
	if prevChanges == "" || prevChanges == firstChanges && first == later {
		t.Errorf("stepping back did not change the projection: %q", prevChanges)
	}
}

func TestBrowserDiff(t *testing.T) {
	br := openLive(t, "/diff?a=idle&b=idle-duplicate-notification")
	br.waitJS("the story", `document.querySelectorAll("#story tr.divergence").length > 0`)
	text := eval[string](br, `document.getElementById("divergence").innerText`)
	if !strings.Contains(text, "notification") {
		t.Errorf("divergence box does not show the extra notification:\n%s", text)
	}
	links := eval[[]string](br, `[...document.querySelectorAll("#divergence a")].map(a => a.getAttribute("href"))`)
	if len(links) != 2 || !strings.HasPrefix(links[0], "/b/idle?seq=") || !strings.HasPrefix(links[1], "/b/idle-duplicate-notification?seq=") {
		t.Errorf("divergence links %v", links)
	}
	br.screenshot("diff")
	// Each side links into its bundle page at the step's seq.
	br.click(`#divergence a:nth-of-type(2)`)
	br.waitJS("the bundle page", `location.pathname === "/b/idle-duplicate-notification" && !!document.querySelector("#events .row.selected")`)
	sel := eval[string](br, `document.querySelector("#events .row.selected").dataset.seq`)
	if !strings.HasSuffix(links[1], "="+sel) {
		t.Errorf("followed %s, selected seq %s", links[1], sel)
	}
}

// TestBrowserEverySuite: a run that failed both suites shows both in the
// banner, each with its failing check, and the verdict box gives the second
// suite's failure a link to its event.
func TestBrowserEverySuite(t *testing.T) {
	dir := t.TempDir()
	s := synth.WithStrayExit(synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle, Fault: "double-notification"}))
	if err := synth.WriteRecorded(filepath.Join(dir, "both.zst"), s); err != nil {
		t.Fatal(err)
	}
	br := openDir(t, dir, "/b/both")
	br.waitJS("the suites", `document.querySelectorAll("#suites .suite").length === 2`)
	got := eval[[]string](br, `[...document.querySelectorAll("#suites .suite")].map(s => s.textContent)`)
	stray := s.At[synth.LabelStrayExit]
	want := []string{
		fmt.Sprintf("background-delivery failed single-notification @%d", s.At[synth.LabelFinal]),
		fmt.Sprintf("protocol-conformance failed answers-request @%d", stray),
	}
	if !slices.Equal(got, want) {
		t.Errorf("suites in the banner %q, want %q", got, want)
	}
	also := eval[string](br, `(document.querySelector('#verdict .also-failed[data-suite="protocol-conformance"]') || {}).textContent || ""`)
	if !strings.Contains(also, "answers-request") || !strings.Contains(also, "A response answers no request in flight") {
		t.Errorf("the verdict box shows the conformance failure as %q", also)
	}
	br.screenshot("every-suite")
	br.click(`#verdict .also-failed a`)
	br.waitJS("the stray Exit selected", fmt.Sprintf(`(() => { const r = document.querySelector("#events .row.selected"); return !!r && r.dataset.seq === "%d"; })()`, stray))
}

// TestBrowserNotApplicable: a run whose scenario does not apply to its
// provider (synth.Inapplicable's native on a synthetic provider, given to
// the viewer as Options.Delivery: wireproof's own scenario registers no
// such pair; as verify records it: nothing driven) shows not-applicable in
// the banner, never a pass, and a verdict box that names the provider and
// gives the reason; the corpus filter finds it by that status.
func TestBrowserNotApplicable(t *testing.T) {
	dir := t.TempDir()
	if err := synth.WriteInapplicable(filepath.Join(dir, "native-1.zst")); err != nil {
		t.Fatal(err)
	}
	srcs, err := Resolve([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := synth.Inapplicable()
	br := newBrowser(t, New(context.Background(), srcs, &Options{Delivery: &spec}))
	br.run(chromedp.Navigate(br.base + "/b/native-1"))
	br.waitJS("the verdict box", `!!document.querySelector("#verdict.na")`)
	got := eval[[]string](br, `[...document.querySelectorAll(".summary > .badge, #suites .suite")].map(b => b.textContent)`)
	want := []string{"not-applicable", "background-delivery not-applicable", "protocol-conformance passed", "reproduced"}
	if !slices.Equal(got, want) {
		t.Errorf("the banner's badges %q, want %q", got, want)
	}
	reason := eval[string](br, `document.getElementById("verdict-reason").textContent`)
	if want := "to " + string(synth.InapplicableProvider) + ": " + synth.InapplicableReason; reason != want {
		t.Errorf("the verdict box's reason %q, want %q", reason, want)
	}
	if box := eval[string](br, `document.getElementById("verdict").textContent`); !strings.Contains(box, "not applicable") || !strings.Contains(box, "nothing: this run neither passed nor failed") {
		t.Errorf("the verdict box says %q", box)
	}
	br.screenshot("not-applicable")
	br.run(chromedp.Navigate(br.base + "/"))
	br.waitJS("the corpus", `document.querySelectorAll("#corpus tbody tr").length === 1`)
	br.setSelect("corpus-status", "not-applicable")
	br.waitJS("the row under its status", `[...document.querySelectorAll("#corpus tbody tr .badge")].some(b => b.textContent === "not-applicable")`)
}
