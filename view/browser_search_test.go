package view

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserSearchAndFlags: in real Chromium, searching the failing run's
// page for "notification" lists the messages that carry the notification
// turn items (their summaries do not name them: the search reads the
// payloads), a bad expression says where it is wrong, and the error flags
// are on the page, the deciding event's among them.
func TestBrowserSearchAndFlags(t *testing.T) {
	mention, items := notificationMessages(t, goldenLive+"/idle-duplicate-notification.zst")
	br := openLive(t, "/b/idle-duplicate-notification")
	br.waitJS("the failing row", `!!document.querySelector("#events .row.failing.selected")`)

	// The flags: a box listing them, the conformance flag at the deciding seq 138.
	br.waitJS("the flags box", `!!document.querySelector("#flags .flag")`)
	if !eval[bool](br, `!!document.querySelector('#flags .flag[data-kind="conformance"][data-seq="138"]')`) {
		t.Errorf("no conformance flag at seq 138 in %q", eval[string](br, `document.getElementById("flags").textContent`))
	}
	if !eval[bool](br, `!!document.querySelector('#events .row.flagged[data-seq="138"] .flag-mark')`) {
		t.Error("the deciding row carries no flag mark")
	}

	// The first bad state, linked beside the deciding event (its details are
	// open as the page opens on it) and in the flags box.
	var b BundleResponse
	getJSON(t, br.base+"/api/bundle/idle-duplicate-notification", &b)
	if b.FirstBad == nil || b.FirstBad.Seq >= 138 || b.FirstBad.Decided != 138 {
		t.Fatalf("first bad state %+v", b.FirstBad)
	}
	fbSeq := fmt.Sprint(b.FirstBad.Seq)
	br.waitJS("the first bad state beside the deciding event", fmt.Sprintf(`(() => { const a = document.querySelector('#detail-event[data-seq="138"] .first-bad-link a'); return !!a && a.textContent === "@seq %s"; })()`, fbSeq))
	if got := eval[string](br, `document.getElementById("first-bad").dataset.seq`); got != fbSeq {
		t.Errorf("flags box first bad seq %s, want %s", got, fbSeq)
	}
	br.click(`#detail-event .first-bad-link a`)
	br.waitJS("the first bad event selected", fmt.Sprintf(`!!document.querySelector('#events .row.selected[data-seq="%s"]')`, fbSeq))

	// A lane per side on the waterfall: the server, each provider, the
	// client's HTTP and MCP's.
	lanes := eval[[]string](br, `document.getElementById("waterfall").waterfall.lanes.map((l) => l.name)`)
	for _, want := range []string{"server", "provider-1", "provider-2", "http", "mcp"} {
		if !slices.Contains(lanes, want) {
			t.Errorf("waterfall lanes %q lack %q", lanes, want)
		}
	}

	br.setSelect("ev-kind", "ws.message")
	br.run(chromedp.SendKeys(chromedp.CSS("#ev-q"), "notification"))
	br.waitJS("the search applied", `document.getElementById("events").dataset.filter === "q=notification&kind=ws.message"`)
	count := eval[string](br, `document.getElementById("ev-count").textContent`)
	if want := fmt.Sprintf("%d of 151 events", len(mention)); count != want {
		t.Errorf("count %q, want %q", count, want)
	}
	// The list is virtual: scroll through it and collect every row's seq
	// (the matches are one page, loaded, so each scroll renders at once).
	shown := eval[[]string](br, `(() => {
		const el = document.getElementById("events"), seen = new Set();
		for (let top = 0; top <= el.scrollHeight; top += Math.max(el.clientHeight / 2, 20)) {
			el.scrollTop = top; el.dispatchEvent(new Event("scroll"));
			for (const r of el.querySelectorAll(".row")) seen.add(r.dataset.seq);
		}
		return [...seen];
	})()`)
	if len(shown) != len(mention) {
		t.Errorf("listed %d rows %v, want the %d messages naming a notification %v", len(shown), shown, len(mention), mention)
	}
	for _, s := range items {
		if !slices.Contains(shown, fmt.Sprint(s)) {
			t.Errorf("seq %d carries notification items and is not listed (listed %v)", s, shown)
		}
	}
	br.screenshot("search-notification")

	// A bad expression: the list keeps nothing new and the error says where.
	br.run(chromedp.SendKeys(chromedp.CSS("#ev-q"), " & (~c"))
	br.waitJS("the syntax error", `(() => { const e = document.getElementById("ev-q-error"); return !e.hidden && e.textContent.includes("column"); })()`)
	if msg := eval[string](br, `document.getElementById("ev-q-error").textContent`); !strings.Contains(msg, "expected a status code") {
		t.Errorf("error shown: %q", msg)
	}
}
