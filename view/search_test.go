package view

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/filter"
	"github.com/wireproof/wireproof/triage"
)

// notificationMessages reads the failing run's bundle on its own: the
// WebSocket messages whose payload mentions "notification" (any case), and
// those that carry notification turn items.
func notificationMessages(t *testing.T, path string) (mention, items []uint64) {
	t.Helper()
	r, err := bundle.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for ev, err := range r.Events(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != bundle.KindWSMessage {
			continue
		}
		if bytes.Contains(bytes.ToLower(ev.Body.Data), []byte("notification")) {
			mention = append(mention, ev.Seq)
		}
		if bytes.Contains(ev.Body.Data, []byte(`"type":"notification"`)) {
			items = append(items, ev.Seq)
		}
	}
	return mention, items
}

// TestAPISearchContent: the search box's expression is evaluated over the
// events' payloads, so "notification" on the failing run finds the messages
// carrying the notification turn items, which no summary names.
func TestAPISearchContent(t *testing.T) {
	_, ts := newTestServer(t, goldenLive)
	base := ts.URL + "/api/bundle/idle-duplicate-notification/events?limit=1000&q="
	seqs := func(q string) []uint64 {
		t.Helper()
		var r EventsResponse
		if code := getJSON(t, base+url.QueryEscape(q), &r); code != 200 {
			t.Fatalf("q=%s: status %d", q, code)
		}
		var out []uint64
		for _, e := range r.Events {
			out = append(out, e.Seq)
		}
		return out
	}
	mention, items := notificationMessages(t, goldenLive+"/idle-duplicate-notification.zst")
	if len(items) < 2 {
		t.Fatalf("%d messages carry notification items, want two or more", len(items))
	}
	if diff := cmp.Diff(mention, seqs("~k ws.message & notification")); diff != "" {
		t.Errorf("~k ws.message & notification (-want +got):\n%s", diff)
	}
	got := seqs("notification")
	for _, s := range mention {
		if !slices.Contains(got, s) {
			t.Errorf("notification: seq %d (a message naming it) is not listed", s)
		}
	}
	if diff := cmp.Diff(items, seqs(`~k ws.message & ~b '"type":"notification"'`)); diff != "" {
		t.Errorf("the notification items' messages (-want +got):\n%s", diff)
	}
	// The answers to a thread read hold them at a JSON path.
	byPath := seqs(`~j exit.value.turnItems.*.type=notification`)
	if len(byPath) == 0 {
		t.Error("~j exit.value.turnItems.*.type=notification matched nothing")
	}
	for _, s := range byPath {
		if !slices.Contains(items, s) {
			t.Errorf("~j matched seq %d, which carries no notification item", s)
		}
	}
	// The select boxes and the expression combine.
	if diff := cmp.Diff(items[:1], seqs(`~b '"type":"notification"' & ~seq -`+strconv.FormatUint(items[0], 10))); diff != "" {
		t.Errorf("seq bound (-want +got):\n%s", diff)
	}
}

// failingBundle is the golden live corpus's failing run as its page reads
// it, and the server it came from.
func failingBundle(t *testing.T) (BundleResponse, *httptest.Server) {
	t.Helper()
	_, ts := newTestServer(t, goldenLive)
	var b BundleResponse
	if code := getJSON(t, ts.URL+"/api/bundle/idle-duplicate-notification", &b); code != 200 {
		t.Fatalf("status %d", code)
	}
	return b, ts
}

// TestAPISearchSyntaxError: an expression that does not parse is a 400
// naming the column and what was expected.
func TestAPISearchSyntaxError(t *testing.T) {
	_, ts := newTestServer(t, goldenLive)
	resp, err := http.Get(ts.URL + "/api/bundle/idle-duplicate-notification/events?q=" + url.QueryEscape("~k ws & (~c"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	want := `column 12: expected a status code (200, 4xx or 400-499) after ~c, found the end of the expression`
	if resp.StatusCode != 400 || !strings.Contains(string(b), want) {
		t.Errorf("status %d, body %s; want 400 saying %q", resp.StatusCode, b, want)
	}
	// The page asks first, and is told where.
	var c FilterCheck
	if code := getJSON(t, ts.URL+"/api/filter?q="+url.QueryEscape("~k ws & (~c"), &c); code != 200 {
		t.Fatalf("/api/filter: status %d", code)
	}
	if diff := cmp.Diff(FilterCheck{Error: `filter "~k ws & (~c": ` + want, Column: 12, Expected: "a status code (200, 4xx or 400-499) after ~c"}, c); diff != "" {
		t.Errorf("/api/filter (-want +got):\n%s", diff)
	}
	var good FilterCheck
	getJSON(t, ts.URL+"/api/filter?q="+url.QueryEscape("~k ws & notification"), &good)
	if diff := cmp.Diff(FilterCheck{OK: true}, good); diff != "" {
		t.Errorf("/api/filter of a good one (-want +got):\n%s", diff)
	}
}

// TestAPIFlags: the failing bundle's page carries the error flags, the
// deciding event's conformance flag among them, each marked on its event.
func TestAPIFlags(t *testing.T) {
	b, ts := failingBundle(t)
	f := b.Verdict.Failure
	var decided bool
	for _, fl := range b.Index.Flags {
		if fl.Kind == filter.FlagConformance && fl.Seq == f.Seq && strings.Contains(fl.What, f.Check) {
			decided = true
		}
	}
	if !decided {
		t.Errorf("no conformance flag at the deciding seq %d in %+v", f.Seq, b.Index.Flags)
	}
	var r EventsResponse
	getJSON(t, ts.URL+"/api/bundle/idle-duplicate-notification/events?limit=1000&q=~e", &r)
	if r.Matched != countFlagged(b.Index.Flags) {
		t.Errorf("~e matched %d events, the flags are on %d", r.Matched, countFlagged(b.Index.Flags))
	}
	for _, e := range r.Events {
		if len(e.Flags) == 0 {
			t.Errorf("~e matched seq %d, which has no flag", e.Seq)
		}
	}
}

// TestAPIHTTPSides: the exchanges that carry JSON-RPC (the providers' MCP
// calls) are on MCP's side, the client's own on none.
func TestAPIHTTPSides(t *testing.T) {
	b, _ := failingBundle(t)
	sides := map[string]string{}
	for _, x := range b.Index.HTTP {
		sides[x.Method+" "+x.URL] = x.Side
	}
	if sides["POST /mcp"] != "mcp" || sides["POST /oauth/token"] != "" {
		t.Errorf("sides %v: want POST /mcp on mcp, POST /oauth/token on none", sides)
	}
}

func countFlagged(fs []triage.Flag) int {
	seen := map[uint64]bool{}
	for _, f := range fs {
		seen[f.Seq] = true
	}
	return len(seen)
}
