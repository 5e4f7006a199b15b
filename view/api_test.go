package view

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/triage"
)

const (
	goldenLive = "../fixtures/golden/live"
	goldenSyn  = "../fixtures/golden"
)

func newTestServer(t *testing.T, args ...string) (*Server, *httptest.Server) {
	t.Helper()
	srcs, err := Resolve(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(context.Background(), srcs, nil)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

// getJSON GETs url, decodes the answer into v and returns the status.
func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q", url, ct)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v\n%s", url, err, b)
		}
	}
	return resp.StatusCode
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "suite", "run.work"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(dir, "suite", "idle-1.zst"))
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(dir, "suite", "run.work", "ignored.zst"))
	copyFile(t, filepath.Join(goldenLive, "native.zst"), filepath.Join(dir, "suite", "deeper", "native-1.zst"))
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	// A suite moved after it ran: results.json names paths that are gone.
	moved := filepath.Join(dir, "moved")
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(moved, "idle-2.zst"))
	os.WriteFile(filepath.Join(moved, "results.json"), []byte(`[{"iteration":2,"scenario":"idle","status":"failed","bundle":"/gone/idle-2.zst","check":"x"},{"iteration":3,"scenario":"idle","status":"interrupted"}]`), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{`), 0o644)
	// A suite with a bundle its results.json does not name: listed all the
	// same (replay and index read it), without a suite status.
	extra := filepath.Join(dir, "extra")
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(extra, "idle-1.zst"))
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(extra, "later.zst"))
	os.WriteFile(filepath.Join(extra, "results.json"), []byte(`[{"iteration":1,"scenario":"idle","status":"passed","bundle":"idle-1.zst"}]`), 0o644)
	// A results.json that cannot be read: the bundles are listed, a warning given.
	corrupt := filepath.Join(dir, "corrupt")
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(corrupt, "idle-1.zst"))
	os.WriteFile(filepath.Join(corrupt, "results.json"), []byte(`[{`), 0o644)

	type row struct{ Name, Path, Status string }
	tests := []struct {
		name string
		args []string
		want []row
		err  string
	}{
		{"file", []string{filepath.Join(dir, "suite", "idle-1.zst")}, []row{{"idle-1", filepath.Join(dir, "suite", "idle-1.zst"), ""}}, ""},
		{"tree", []string{filepath.Join(dir, "suite")}, []row{
			{"deeper/native-1", filepath.Join(dir, "suite", "deeper", "native-1.zst"), ""},
			{"idle-1", filepath.Join(dir, "suite", "idle-1.zst"), ""}}, ""},
		{"results", []string{moved}, []row{{"idle-2", filepath.Join(moved, "idle-2.zst"), "failed"}}, ""},
		{"results file", []string{filepath.Join(moved, "results.json")}, []row{{"idle-2", filepath.Join(moved, "idle-2.zst"), "failed"}}, ""},
		{"results and more", []string{extra}, []row{
			{"idle-1", filepath.Join(extra, "idle-1.zst"), "passed"},
			{"later", filepath.Join(extra, "later.zst"), ""}}, ""},
		{"results nested", []string{dir}, []row{
			{"corrupt/idle-1", filepath.Join(corrupt, "idle-1.zst"), ""},
			{"extra/idle-1", filepath.Join(extra, "idle-1.zst"), "passed"},
			{"extra/later", filepath.Join(extra, "later.zst"), ""},
			{"moved/idle-2", filepath.Join(moved, "idle-2.zst"), "failed"},
			{"suite/deeper/native-1", filepath.Join(dir, "suite", "deeper", "native-1.zst"), ""},
			{"suite/idle-1", filepath.Join(dir, "suite", "idle-1.zst"), ""}}, ""},
		{"results corrupt", []string{corrupt}, []row{{"idle-1", filepath.Join(corrupt, "idle-1.zst"), ""}}, "corrupt/results.json: not a suite's results.json"},
		{"missing", []string{filepath.Join(dir, "nope")}, nil, "no such file or directory"},
		{"empty", []string{filepath.Join(dir, "empty")}, nil, "no *.zst bundles under " + filepath.Join(dir, "empty")},
		{"none", nil, nil, "no bundle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var warned []string
			srcs, err := Resolve(tc.args, &ResolveOptions{Warn: func(err error) { warned = append(warned, err.Error()) }})
			if tc.want != nil && tc.err != "" { // a warning, not an error
				if len(warned) != 1 || !strings.Contains(warned[0], tc.err) {
					t.Errorf("warnings %q, want one with %q", warned, tc.err)
				}
				tc.err = ""
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				var ie *InputError
				if len(tc.args) > 0 && (!errors.As(err, &ie) || ie.Arg != tc.args[0]) {
					t.Errorf("err %v does not name the argument", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []row
			for _, s := range srcs {
				got = append(got, row{s.Name, s.Path, s.Status})
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Error(d)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAPIBundlesAgreeWithReplay: every corpus row says what `wireproof
// replay` says of the bundle.
func TestAPIBundlesAgreeWithReplay(t *testing.T) {
	s, ts := newTestServer(t, goldenLive, goldenSyn)
	var c CorpusResponse
	if code := getJSON(t, ts.URL+"/api/bundles", &c); code != 200 {
		t.Fatalf("status %d", code)
	}
	if len(c.Bundles) != len(s.srcs0) || len(c.Bundles) < 40 {
		t.Fatalf("%d rows for %d bundles", len(c.Bundles), len(s.srcs0))
	}
	for i, row := range c.Bundles {
		res, err := replay.ReplayFile(context.Background(), s.srcs0[i].Path, delivery.Options(nil))
		if err != nil {
			if row.Status != "unreadable" || row.Error == "" {
				t.Errorf("%s: replay fails (%v), row says %s", row.Name, err, row.Status)
			}
			continue
		}
		want := Row{ID: row.ID, Name: row.Name, Path: row.Path, Duration: row.Duration}
		fillRow(&want, res)
		if d := cmp.Diff(want, row); d != "" {
			t.Errorf("%s: row differs from replay (-replay +row):\n%s", row.Name, d)
		}
		if row.Duration <= 0 {
			t.Errorf("%s: duration %d", row.Name, row.Duration)
		}
	}
	// Ids are unique although both corpora hold an idle.zst.
	ids := map[string]bool{}
	for _, r := range c.Bundles {
		if ids[r.ID] {
			t.Errorf("duplicate id %s", r.ID)
		}
		ids[r.ID] = true
	}
	if !ids["idle"] || !ids["idle-2"] {
		t.Errorf("ids %v", ids)
	}
}

func TestRates(t *testing.T) {
	rows := []Row{
		{Scenario: "idle", Status: "passed", Replay: replay.Reproduced},
		{Scenario: "idle", Status: "failed", Check: "single-notification", Replay: replay.Reproduced},
		{Scenario: "idle", Status: "failed", Check: "single-notification", Replay: replay.Reproduced},
		{Scenario: "idle", Status: "passed", Replay: replay.Diverged},
		{Scenario: "nested", Status: "unreadable"},
		{Scenario: "", Status: "skipped"},
	}
	want := []Rate{
		{Scenario: "idle", Runs: 4, Failed: 3, Rate: 0.75},
		{Scenario: "idle", Check: "(diverged)", Runs: 4, Failed: 1, Rate: 0.25},
		{Scenario: "idle", Check: "single-notification", Runs: 4, Failed: 2, Rate: 0.5},
		{Scenario: "nested", Runs: 1, Failed: 1, Rate: 1},
		{Scenario: "nested", Check: "(unreadable)", Runs: 1, Failed: 1, Rate: 1},
	}
	if d := cmp.Diff(want, rates(rows)); d != "" {
		t.Error(d)
	}
}

func TestAPIBundle(t *testing.T) {
	b, ts := failingBundle(t)
	f := b.Verdict.Failure
	if f == nil || f.Check != "single-notification" || f.Seq != 138 || b.Row.Replay != replay.Reproduced {
		t.Fatalf("verdict %+v, row %+v", b.Verdict, b.Row)
	}
	if b.Events != 151 || b.Index.LastT <= 0 || len(b.Index.WS) != 1 || len(b.Index.HTTP) != 7 {
		t.Errorf("events %d, lastT %d, ws %d, http %d", b.Events, b.Index.LastT, len(b.Index.WS), len(b.Index.HTTP))
	}
	i := slices.IndexFunc(b.Index.Calls, func(c CallSpan) bool { return c.Method == "orchestration.launchThread" })
	if i < 0 || b.Index.Calls[i].Outcome != "success" || b.Index.Calls[i].EndSeq == 0 {
		t.Errorf("launchThread call: %+v", b.Index.Calls)
	}
	// The observations are the engine's, up to the deciding one.
	if len(b.Observations) == 0 || b.Observations[len(b.Observations)-1].Seq != 138 {
		t.Fatalf("observations %+v", b.Observations)
	}
	// The provider reads task_status (the acknowledgement), then answers and
	// ends its run: the deciding observation is the run's end.
	last := b.Observations[len(b.Observations)-1]
	if !slices.ContainsFunc(last.Changes, func(c string) bool { return strings.Contains(c, "running → completed") }) {
		t.Errorf("last changes %q", last.Changes)
	}
	if !slices.ContainsFunc(b.Observations, func(o Observation) bool {
		return slices.ContainsFunc(o.Changes, func(c string) bool { return strings.Contains(c, "delivery delivered → acknowledged") })
	}) {
		t.Errorf("no observation shows the acknowledgement: %+v", b.Observations)
	}
	if code := getJSON(t, ts.URL+"/api/bundle/nope", nil); code != 404 {
		t.Errorf("unknown bundle: %d", code)
	}
}

func TestAPIEvents(t *testing.T) {
	_, ts := newTestServer(t, goldenLive)
	base := ts.URL + "/api/bundle/idle-duplicate-notification/events"
	get := func(q string) EventsResponse {
		t.Helper()
		var r EventsResponse
		if code := getJSON(t, base+q, &r); code != 200 {
			t.Fatalf("%s: status %d", q, code)
		}
		return r
	}
	all := get("?limit=1000")
	if all.Total != 151 || all.Matched != 151 || len(all.Events) != 151 || all.At != -1 {
		t.Fatalf("all: total %d matched %d len %d at %d", all.Total, all.Matched, len(all.Events), all.At)
	}
	for i, e := range all.Events {
		if e.Seq != uint64(i) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	w := get("?from=10&limit=5")
	if w.From != 10 || len(w.Events) != 5 || w.Events[0].Seq != 10 {
		t.Errorf("window: %+v", w)
	}
	a := get("?around=138&limit=10")
	if a.At != 138 || a.From != 133 || a.Events[a.At-a.From].Seq != 138 {
		t.Errorf("around: at %d from %d", a.At, a.From)
	}
	tests := []struct {
		q  string
		ok func(Event) bool
	}{
		{"kind=http", func(e Event) bool { return strings.HasPrefix(e.Kind, "http.") }},
		{"kind=ws.close", func(e Event) bool { return e.Kind == "ws.close" }},
		{"conn=server", func(e Event) bool { return e.Conn == "server" }},
		{"method=orchestration.getThreadProjection", func(e Event) bool { return strings.Contains(e.RPC, "getThreadProjection") }},
		{"method=POST", func(e Event) bool { return e.Exchange >= 0 }},
		{"status=2xx", func(e Event) bool { return e.Exchange >= 0 }},
		{"outcome=interrupted", func(e Event) bool { return strings.Contains(e.RPC, "subscribeThread") }},
		{"q=SIGTERM", func(e Event) bool { return strings.Contains(e.Summary, "SIGTERM") }},
	}
	for _, tc := range tests {
		r := get("?limit=1000&" + tc.q)
		if r.Matched == 0 || r.Matched >= r.Total || len(r.Events) != r.Matched {
			t.Errorf("%s: matched %d of %d", tc.q, r.Matched, r.Total)
		}
		for _, e := range r.Events {
			if !tc.ok(e) {
				t.Errorf("%s matched %+v", tc.q, e)
			}
		}
	}
	// around with a filter finds the first matching event at or after the seq.
	r := get("?kind=proc&around=138")
	if r.At < 0 || r.Events[r.At-r.From].Seq < 138 || r.Events[r.At-r.From].Kind[:5] != "proc." {
		t.Errorf("filtered around: %+v", r)
	}
	for _, q := range []string{"?from=x", "?limit=-1", "?around=x"} {
		if code := getJSON(t, base+q, nil); code != 400 {
			t.Errorf("%s: status %d, want 400", q, code)
		}
	}
}

func TestAPIEventDetail(t *testing.T) {
	_, ts := newTestServer(t, goldenLive)
	base := ts.URL + "/api/bundle/idle-duplicate-notification/event/"
	var d EventDetail
	if code := getJSON(t, base+"27", &d); code != 200 {
		t.Fatalf("status %d", code)
	}
	if d.Kind != "ws.message" || d.Body == nil || d.Body.Encoding != "json" || !strings.Contains(string(d.Body.JSON), `"orchestration.launchThread"`) {
		t.Errorf("seq 27: %+v", d)
	}
	if len(d.Calls) != 1 {
		t.Errorf("seq 27 calls %v", d.Calls)
	}
	var req EventDetail
	getJSON(t, base+"7", &req)
	if req.Kind != "http.request" || req.Method != "POST" || len(req.Header) == 0 {
		t.Errorf("seq 7: %+v", req)
	}
	var h EventDetail
	getJSON(t, base+"0", &h)
	if h.Kind != "header" || !strings.Contains(string(h.Body.JSON), `"scenario":"idle"`) {
		t.Errorf("header: %+v", h)
	}
	for _, seq := range []string{"151", "x", "-1"} {
		if code := getJSON(t, base+seq, nil); code != 404 {
			t.Errorf("seq %s: status %d", seq, code)
		}
	}
}

func TestPayloadOf(t *testing.T) {
	big := strings.Repeat("a", MaxDetailBody+10)
	tests := []struct {
		name string
		data []byte
		bin  bool
		want Payload
	}{
		{"json", []byte(`{"a":1}`), false, Payload{Encoding: "json", JSON: json.RawMessage(`{"a":1}`), Size: 7}},
		{"text", []byte("hello"), false, Payload{Encoding: "text", Text: "hello", Size: 5}},
		{"binary", []byte{0, 1, 'A'}, true, Payload{Encoding: "hex", Text: "00000000  00 01 41                                          |..A|\n", Size: 3}},
		{"invalid utf-8", []byte{0xff}, false, Payload{Encoding: "hex", Text: "00000000  ff                                                |.|\n", Size: 1}},
		{"capped", []byte(big), false, Payload{Encoding: "text", Text: big[:MaxDetailBody], Size: len(big), Truncated: true}},
	}
	for _, tc := range tests {
		if d := cmp.Diff(&tc.want, payloadOf(tc.data, tc.bin)); d != "" {
			t.Errorf("%s: %s", tc.name, d)
		}
	}
	if payloadOf(nil, false) != nil {
		t.Error("nil payload")
	}
}

func TestAPICall(t *testing.T) {
	_, ts := newTestServer(t, goldenSyn)
	var b BundleResponse
	getJSON(t, ts.URL+"/api/bundle/idle", &b)
	launch := slices.IndexFunc(b.Index.Calls, func(c CallSpan) bool { return c.Method == "orchestration.launchThread" })
	sub := slices.IndexFunc(b.Index.Calls, func(c CallSpan) bool { return c.Method == "orchestration.subscribeThread" })
	if launch < 0 || sub < 0 {
		t.Fatalf("calls %+v", b.Index.Calls)
	}
	var c CallDetail
	getJSON(t, ts.URL+"/api/bundle/idle/call/"+strconv.Itoa(launch), &c)
	if c.Payload == nil || !strings.Contains(string(c.Payload.JSON), `"threadId"`) || c.Exit == nil || !strings.Contains(string(c.Exit.JSON), `"Success"`) {
		t.Errorf("launchThread: %+v", c)
	}
	// The subscription was interrupted: its Exit Failure's cause is an Interrupt.
	var s CallDetail
	getJSON(t, ts.URL+"/api/bundle/idle/call/"+strconv.Itoa(sub), &s)
	if s.Outcome != "failure" || len(s.Interrupts) != 1 || len(s.Chunks) == 0 || s.Chunks[0].Values == nil {
		t.Errorf("subscribeThread: %+v", s)
	}
	if code := getJSON(t, ts.URL+"/api/bundle/idle/call/999", nil); code != 404 {
		t.Errorf("unknown call: %d", code)
	}
}

func TestAPIProjection(t *testing.T) {
	_, ts := newTestServer(t, goldenLive)
	base := ts.URL + "/api/bundle/idle-duplicate-notification/projection"
	var before ProjectionResponse
	getJSON(t, base+"?seq=5", &before)
	if before.Index != -1 || before.State != nil {
		t.Errorf("before the first observation: %+v", before)
	}
	var first ProjectionResponse
	getJSON(t, base+"?obs=0", &first)
	if first.Index != 0 || first.State == nil || first.Previous != nil || len(first.Observation.Changes) != 1 {
		t.Errorf("first: %+v", first)
	}
	var at ProjectionResponse
	getJSON(t, base+"?seq=1000", &at)
	if at.Observation == nil || at.Observation.Seq != 138 || at.Previous == nil {
		t.Fatalf("last: %+v", at)
	}
	if len(at.State.Runs) != 2 || at.State.Runs[1].Status != "completed" || at.Previous.Runs[1].Status != "running" {
		t.Errorf("runs %+v, before %+v", at.State.Runs, at.Previous.Runs)
	}
	notifications := 0
	for _, it := range at.State.TurnItems {
		if it.Type == "notification" {
			notifications++
		}
	}
	if notifications != 2 {
		t.Errorf("the duplicate notification is not in the state: %+v", at.State.TurnItems)
	}
	// The moment between two observations is the earlier one.
	var mid ProjectionResponse
	getJSON(t, base+"?seq=137", &mid)
	if mid.Index != at.Index-1 {
		t.Errorf("seq 137 shows observation %d, want %d", mid.Index, at.Index-1)
	}
	for _, q := range []string{"", "?obs=99", "?seq=x"} {
		if code := getJSON(t, base+q, nil); code != 400 && code != 404 {
			t.Errorf("%q: status %d", q, code)
		}
	}
}

// TestAPIDiff: the rows hold every step of both stories once, in order, and
// mark exactly the hunks triage.Diff reports.
func TestAPIDiff(t *testing.T) {
	s, ts := newTestServer(t, goldenLive)
	var d DiffResponse
	if code := getJSON(t, ts.URL+"/api/diff?a=idle&b=idle-duplicate-notification", &d); code != 200 {
		t.Fatalf("status %d", code)
	}
	want, err := triage.Diff(context.Background(), s.byID["idle"].Path, s.byID["idle-duplicate-notification"].Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Result.Divergence == nil || d.Result.Same || d.Result.Divergence.Diff != want.Divergence.Diff {
		t.Fatalf("divergence %+v", d.Result.Divergence)
	}
	var as, bs []int
	kinds := map[string]int{}
	for _, r := range d.Rows {
		if r.A >= 0 {
			as = append(as, r.A)
		}
		if r.B >= 0 {
			bs = append(bs, r.B)
		}
		kinds[r.Kind]++
		if r.Kind == "divergence" && (r.A >= 0 && (r.A < want.Divergence.AIndex || r.A >= want.Divergence.AEnd)) {
			t.Errorf("row %+v outside the divergence", r)
		}
	}
	if len(as) != len(want.A.Story) || len(bs) != len(want.B.Story) || !slices.IsSorted(as) || !slices.IsSorted(bs) {
		t.Errorf("rows %+v do not cover the stories (%d, %d steps)", d.Rows, len(want.A.Story), len(want.B.Story))
	}
	if kinds["divergence"] == 0 || kinds["same"] == 0 {
		t.Errorf("row kinds %v", kinds)
	}
	if code := getJSON(t, ts.URL+"/api/diff?a=idle", nil); code != 404 {
		t.Errorf("one side: %d", code)
	}
}

func TestAlignRows(t *testing.T) {
	story := func(n int) []triage.StoryStep { return make([]triage.StoryStep, n) }
	res := &triage.DiffResult{
		A: triage.DiffSide{Story: story(5)}, B: triage.DiffSide{Story: story(6)},
		Transient:  []triage.StoryHunk{{AIndex: 1, AEnd: 2, BIndex: 1, BEnd: 1}},
		Divergence: &triage.Divergence{StoryHunk: triage.StoryHunk{AIndex: 3, AEnd: 5, BIndex: 2, BEnd: 6}},
	}
	want := []DiffRow{{0, 0, "same"}, {1, -1, "transient"}, {2, 1, "same"}, {3, 2, "divergence"}, {4, 3, "divergence"}, {-1, 4, "divergence"}, {-1, 5, "divergence"}}
	if d := cmp.Diff(want, alignRows(res)); d != "" {
		t.Error(d)
	}
}

// remoteRef matches a reference that would make the browser fetch from
// another origin.
var remoteRef = regexp.MustCompile(`(?i)(src|href|action)\s*=\s*["']?(https?:)?//|url\(\s*["']?(https?:)?//|@import|fetch\(\s*["'\x60](https?:)?//|new WebSocket`)

func TestPagesAndAssets(t *testing.T) {
	_, ts := newTestServer(t, goldenLive)
	for _, p := range []string{"/", "/b/idle", "/diff?a=idle&b=idle", "/assets/app.js", "/assets/app.css", "/assets/icon.svg"} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) == 0 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		// Offline: nothing is fetched from anywhere else.
		if m := remoteRef.FindString(string(b)); m != "" {
			t.Errorf("%s loads from another origin: %s", p, m)
		}
	}
	resp, err := http.Get(ts.URL + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // an unclosed body holds its connection's goroutines forever
	if resp.StatusCode != 404 {
		t.Errorf("/nope: %d", resp.StatusCode)
	}
}

// TestCacheBounded: only Options.Cache bundles stay open.
func TestCacheBounded(t *testing.T) {
	srcs, err := Resolve([]string{goldenLive}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(context.Background(), srcs, &Options{Cache: 2})
	for _, id := range s.IDs()[:5] {
		if _, err := s.bundle(id); err != nil {
			t.Fatal(err)
		}
	}
	if s.lru.Len() != 2 || len(s.open) != 2 {
		t.Errorf("%d bundles open, want 2", s.lru.Len())
	}
}

// TestOpenAgreesWithReplay: the one pass that opens a bundle for its page
// reaches the verdict `wireproof replay` reaches, for every golden bundle.
func TestOpenAgreesWithReplay(t *testing.T) {
	srcs, err := Resolve([]string{goldenLive, goldenSyn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range srcs {
		want, werr := replay.ReplayFile(context.Background(), src.Path, delivery.Options(nil))
		an, ix, err := read(context.Background(), src.Path, delivery.Registered())
		if (err != nil) != (werr != nil) {
			t.Errorf("%s: read error %v, replay error %v", src.Name, err, werr)
			continue
		}
		if err != nil {
			continue
		}
		if d := cmp.Diff(want, an.Result); d != "" {
			t.Errorf("%s: the viewer's replay differs from wireproof replay's (-replay +view):\n%s", src.Name, d)
		}
		if uint64(len(ix.Events)) != want.Events {
			t.Errorf("%s: %d events indexed, replay read %d", src.Name, len(ix.Events), want.Events)
		}
	}
}

// TestAPIUnreadableBundle: asking for a bundle that cannot be read (not
// zstd, empty, a broken line) is not a server fault: 422 with an error naming
// the file; a bundle removed since the viewer started is 404. Nothing panics
// and the corpus still lists them, unreadable.
func TestAPIUnreadableBundle(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(dir, "good.zst"))
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(dir, "gone.zst"))
	os.WriteFile(filepath.Join(dir, "garbage.zst"), []byte("not zstd at all"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.zst"), nil, 0o644)
	_, ts := newTestServer(t, dir)
	os.Remove(filepath.Join(dir, "gone.zst"))
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/api/bundle/garbage", http.StatusUnprocessableEntity, "garbage.zst is not a wireproof bundle: not zstd data"},
		{"/api/bundle/garbage/events?from=0", http.StatusUnprocessableEntity, "garbage.zst"},
		{"/api/bundle/empty/event/0", http.StatusUnprocessableEntity, "empty.zst is not a wireproof bundle: the file is empty"},
		{"/api/diff?a=good&b=garbage", http.StatusUnprocessableEntity, "garbage.zst"},
		{"/api/bundle/gone", http.StatusNotFound, "gone.zst"},
		{"/api/bundle/..%2F..%2Fetc%2Fpasswd", http.StatusNotFound, `no bundle "../../etc/passwd"`},
		{"/api/bundle/good/event/18446744073709551615", http.StatusNotFound, "no event with seq"},
		{"/api/bundle/good/events?from=99999999999999999999", http.StatusBadRequest, "from must be a non-negative integer"},
	} {
		var e struct{ Error string }
		if code := getJSON(t, ts.URL+tc.path, &e); code != tc.code || !strings.Contains(e.Error, tc.want) {
			t.Errorf("GET %s: %d %q, want %d and %q", tc.path, code, e.Error, tc.code, tc.want)
		}
	}
}

// TestAPIBothSidesClose: a connection both sides close, the server with its
// own code after a message that followed the client's close, shows both
// closes on its waterfall span, which ends at the last.
func TestAPIBothSidesClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "closes.zst")
	var now int64
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test", Manifest: bundle.Manifest{Scenario: "idle"}},
		&bundle.WriterOptions{Clock: func() int64 { now += 1000; return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []*bundle.Event{
		{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
		{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000},
		{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"late":true}`))},
		{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 4005, Reason: "going"},
	} {
		if _, err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, path)
	var b BundleResponse
	if code := getJSON(t, ts.URL+"/api/bundle/closes", &b); code != 200 {
		t.Fatalf("status %d", code)
	}
	if len(b.Index.WS) != 1 {
		t.Fatalf("ws spans %+v", b.Index.WS)
	}
	got := b.Index.WS[0]
	if got.Close != "close by c2s 1000; close by s2c 4005 going" || got.CloseSeq != 4 || got.Messages != 1 {
		t.Errorf("span %+v: want both closes in words, ending at seq 4 with its message", got)
	}
}

// TestResolveFollowsLinkedDirectory: a directory given through a symbolic
// link lists its bundles, named by the link.
func TestResolveFollowsLinkedDirectory(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(goldenLive, "idle.zst"), filepath.Join(dir, "real", "idle-1.zst"))
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "real"), link); err != nil {
		t.Fatal(err)
	}
	srcs, err := Resolve([]string{link}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Path != filepath.Join(link, "idle-1.zst") {
		t.Errorf("sources %+v, want the bundle under the link", srcs)
	}
}
