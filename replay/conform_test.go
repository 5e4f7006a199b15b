package replay_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// insert returns evs with extra inserted before index i, seqs renumbered;
// it returns the seq of the first inserted event.
func insert(evs []bundle.Event, i int, extra ...bundle.Event) ([]bundle.Event, uint64) {
	out := append(append(append([]bundle.Event{}, evs[:i]...), extra...), evs[i:]...)
	for j := range out {
		out[j].Seq = uint64(j)
	}
	return out, uint64(i)
}

// find returns the index of the first event that matches.
func find(t *testing.T, evs []bundle.Event, match func(*bundle.Event) bool) int {
	t.Helper()
	for i := range evs {
		if match(&evs[i]) {
			return i
		}
	}
	t.Fatal("no such event")
	return -1
}

func wsMsg(dir bundle.Dir, body string) bundle.Event {
	return bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: dir, Type: bundle.TypeText, Body: bundle.Text([]byte(body))}
}

func isMsg(dir bundle.Dir, sub string) func(*bundle.Event) bool {
	return func(ev *bundle.Event) bool {
		return ev.Kind == bundle.KindWSMessage && ev.Dir == dir && bytes.Contains(ev.Body.Data, []byte(sub))
	}
}

func conformanceOf(t *testing.T, v assert.Verdict) assert.SuiteResult {
	t.Helper()
	for _, s := range v.Suites {
		if s.Suite == assert.SuiteConformance {
			return s
		}
	}
	t.Fatalf("no conformance suite in %+v", v.Suites)
	return assert.SuiteResult{}
}

// TestConformanceMutations breaks a passing run's protocol in one place per
// check and requires exactly that check of the protocol-conformance suite to
// fail, at the event that broke it. Every conformance check has a case.
func TestConformanceMutations(t *testing.T) {
	c2s, s2c := bundle.DirClientToServer, bundle.DirServerToClient
	cases := []struct {
		check  string
		mutate func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64)
	}{
		{assert.CheckAnswersRequest, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			i := find(t, evs, isMsg(s2c, `"Exit"`))
			return insert(evs, i, wsMsg(s2c, `{"_tag":"Exit","requestId":"9999","exit":{"_tag":"Success","value":null}}`))
		}},
		{assert.CheckAnswersRequest, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			// The same Exit twice: the second answers a call already answered.
			i := find(t, evs, isMsg(s2c, `"Exit"`))
			return insert(evs, i+1, evs[i])
		}},
		{assert.CheckIDNotReused, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			i := find(t, evs, isMsg(c2s, `subscribeThread"`))
			return insert(evs, i+1, evs[i])
		}},
		{assert.CheckStreamAcked, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			i := find(t, evs, isMsg(s2c, `"Chunk"`))
			return insert(evs, i+1, evs[i]) // a second chunk before the Ack of the first
		}},
		{assert.CheckInterruptAnswer, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			i := find(t, evs, isMsg(c2s, `subscribeThread"`))
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(evs[i].Body.Data, &req)
			j := find(t, evs, isMsg(s2c, `"Chunk"`))
			evs, _ = insert(evs, j+2, wsMsg(c2s, `{"_tag":"Interrupt","requestId":`+string(req.ID)+`}`))
			evs, seq := insert(evs, j+3, bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: s2c, Code: 1000})
			return evs, seq
		}},
		{assert.CheckJSONRPCEnvelope, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			return insert(evs, 3, bundle.Event{Kind: bundle.KindStdioLine, Conn: "stdio", Dir: c2s, Body: bundle.Text([]byte(`{"id":1,"method":"initialize","params":{}}`))})
		}},
		{assert.CheckHTTPBodyLength, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			evs, _ = insert(evs, 3,
				bundle.Event{Kind: bundle.KindHTTPRequest, Conn: "h99", Method: "GET", URL: "/health"},
				bundle.Event{Kind: bundle.KindHTTPResponse, Conn: "h99", Status: 200, Header: http.Header{"Content-Length": {"10"}}},
				bundle.Event{Kind: bundle.KindHTTPBody, Conn: "h99", Dir: s2c, Body: bundle.Text([]byte("ok"))})
			return insert(evs, 6, bundle.Event{Kind: bundle.KindHTTPEnd, Conn: "h99", Size: 2})
		}},
		{assert.CheckWebSocketCloseOK, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			evs, _ = insert(evs, 3, bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws99", URL: "/other"})
			return insert(evs, 4, bundle.Event{Kind: bundle.KindWSClose, Conn: "ws99", Dir: s2c, Code: 1004})
		}},
	}
	for fault, check := range synth.ModelChecks {
		cases = append(cases, struct {
			check  string
			mutate func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64)
		}{check, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			calls, at := synth.ModelCalls("h98", "h99", fault)
			evs, first := insert(evs, 3, calls...)
			return evs, first + uint64(at)
		}})
	}
	for fault, check := range synth.CodexChecks {
		cases = append(cases, struct {
			check  string
			mutate func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64)
		}{check, func(t *testing.T, evs []bundle.Event) ([]bundle.Event, uint64) {
			ch, at := synth.CodexChannel("provider-1", fault)
			evs, first := insert(evs, 3, ch...)
			return evs, first + uint64(at)
		}})
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.check] = true
		t.Run(tc.check, func(t *testing.T) {
			s := synth.MustBuild(synth.Options{Scenario: "idle"})
			evs, at := tc.mutate(t, s.Events)
			e := replay.NewEngine(delivery.EngineOptions(nil))
			feedAll(t, e, evs)
			v := e.Verdict()
			c := conformanceOf(t, v)
			if c.Failure == nil {
				t.Fatalf("conformance passed; want %s to fail", tc.check)
			}
			if c.Failure.Check != tc.check || c.Failure.Seq != at {
				t.Errorf("conformance failed %s @%d, want %s @%d: %+v", c.Failure.Check, c.Failure.Seq, tc.check, at, c.Failure)
			}
			if c.Failure.Message != message(tc.check) || c.Failure.Expected == "" || c.Failure.Seen == "" {
				t.Errorf("failure lacks message, expected or seen: %+v", c.Failure)
			}
			if v.Status != assert.StatusFailed {
				t.Errorf("verdict %s with a failed conformance suite", v.Status)
			}
		})
	}
	for _, c := range assert.Conformance {
		if !covered[c.ID] {
			t.Errorf("no mutation makes conformance check %s fail", c.ID)
		}
	}
}

// TestPlainRecordingJudged: a stream with no run mark and no scenario in its
// header holds no verification run, so the background-delivery suite does
// not run, not even when the recording happens to hold a launchThread; the
// conformance suite does, and decides. With a scenario in the header (a
// verify run cut short before its run mark) the background suite runs and
// fails.
func TestPlainRecordingJudged(t *testing.T) {
	launch := []bundle.Event{
		{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
		wsMsg(bundle.DirClientToServer, `{"_tag":"Request","id":"1","tag":"orchestration.launchThread","payload":{"threadId":"t1"}}`),
		wsMsg(bundle.DirServerToClient, `{"_tag":"Exit","requestId":"1","exit":{"_tag":"Success","value":{"threadId":"t1","projection":{"threadId":"t1","messages":[],"runs":[{"id":"r1","ordinal":1,"status":"failed"}],"subagents":[],"turnItems":[]}}}}`),
	}
	for _, tc := range []struct {
		name, scenario string
		extra          []bundle.Event
		want           assert.Status
		suites         []string
	}{
		{"plain", "", nil, assert.StatusPassed, []string{assert.SuiteConformance}},
		{"plain with a launchThread", "", launch, assert.StatusPassed, []string{assert.SuiteConformance}},
		{"plain, broken protocol", "", []bundle.Event{{Kind: bundle.KindStdioLine, Conn: "stdio", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"jsonrpc":"2.0","id":5,"result":{}}`))}},
			assert.StatusFailed, []string{assert.SuiteConformance}},
		{"verification run cut short", "idle", nil, assert.StatusFailed, []string{assert.SuiteBackgroundDelivery, assert.SuiteConformance}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := json.Marshal(bundle.Header{Format: bundle.FormatVersion, Manifest: bundle.Manifest{Scenario: tc.scenario}})
			evs := []bundle.Event{
				{Kind: bundle.KindHeader, Body: bundle.Text(h)},
				{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/"},
				{Kind: bundle.KindHTTPEnd, Conn: "h1"},
			}
			evs = append(evs, tc.extra...)
			for i := range evs {
				evs[i].Seq, evs[i].T = uint64(i), int64(i)
			}
			e := replay.NewEngine(delivery.EngineOptions(nil))
			feedAll(t, e, evs)
			v := e.Verdict()
			if v.Status != tc.want {
				t.Errorf("status %s, want %s: %+v", v.Status, tc.want, v.Failure)
			}
			var got []string
			for _, s := range v.Suites {
				got = append(got, s.Suite)
			}
			if !equalStrings(got, tc.suites) {
				t.Errorf("suites %v, want %v", got, tc.suites)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMalformedMarkIsADecodeError: the driver's marks share one encoder and
// decoder; a mark whose body does not decode is kept as a decode error
// instead of being read as zero values (the mark still decides).
func TestMalformedMarkIsADecodeError(t *testing.T) {
	run, err := replay.EncodeMark(replay.MarkRun, replay.RunInfo{Scenario: "idle", ThreadID: "t1", Secret: "RESULT_x"})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := replay.EncodeMark(replay.MarkDeadline, replay.DeadlineMark{TimeoutSeconds: 5})
	for _, tc := range []struct {
		name    string
		body    []byte
		errs    int
		seenHas string
	}{
		{"well-formed", good.Body.Data, 0, "the 5s timeout expired"},
		{"wrong type", []byte(`{"timeoutSeconds":"five"}`), 1, "timeout expired"},
		{"not an object", []byte(`[5]`), 1, "timeout expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := []bundle.Event{*run, {Kind: bundle.KindMark, Name: replay.MarkDeadline, Body: bundle.Text(tc.body)}}
			for i := range evs {
				evs[i].Seq = uint64(i + 1)
			}
			e := replay.NewEngine(delivery.EngineOptions(nil))
			feedAll(t, e, evs)
			v := e.Verdict()
			if v.Failure == nil || v.Failure.Check != assert.CheckDeadline || !bytes.Contains([]byte(v.Failure.Seen), []byte(tc.seenHas)) {
				t.Errorf("verdict %+v, want deadline", v.Failure)
			}
			errs, n := e.DecodeErrors()
			if n != tc.errs {
				t.Errorf("%d decode errors, want %d: %+v", n, tc.errs, errs)
			}
			if n > 0 && !bytes.Contains([]byte(errs[0].Err), []byte("deadline mark")) {
				t.Errorf("the decode error does not name the mark: %+v", errs[0])
			}
		})
	}
}

// TestModelCallsConform: model calls done right (a streamed tool_use,
// answered in the next request, then text) pass the conformance suite.
func TestModelCallsConform(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: "idle"})
	calls, at := synth.ModelCalls("h98", "h99", synth.ModelFine)
	if at != -1 {
		t.Fatalf("a fine model call decides at %d", at)
	}
	evs, _ := insert(s.Events, 3, calls...)
	e := replay.NewEngine(delivery.EngineOptions(nil))
	feedAll(t, e, evs)
	if c := conformanceOf(t, e.Verdict()); c.Failure != nil {
		t.Errorf("conformance failed on model calls done right: %+v", c.Failure)
	}
}
