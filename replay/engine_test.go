package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

func feedAll(t testing.TB, e *replay.Engine, evs []bundle.Event) {
	t.Helper()
	for i := range evs {
		if err := e.Feed(&evs[i]); err != nil {
			t.Fatalf("feed seq %d: %v", evs[i].Seq, err)
		}
	}
}

// TestScenariosPass: every scenario passes, in every framing and id type.
func TestScenariosPass(t *testing.T) {
	for _, sc := range assert.Scenarios() {
		for _, o := range []synth.Options{{}, {NDJSON: true}, {StringIDs: true}, {Polls: 3}} {
			o.Scenario = sc
			t.Run(fmt.Sprintf("%s/ndjson=%v/strings=%v/polls=%d", sc, o.NDJSON, o.StringIDs, o.Polls), func(t *testing.T) {
				s := synth.MustBuild(o)
				e := replay.NewEngine(delivery.EngineOptions(nil))
				feedAll(t, e, s.Events)
				runCount := 2
				if sc == "active" {
					runCount = 1
				}
				want := assert.Verdict{Status: assert.StatusPassed, Scenario: sc, ThreadID: synth.ThreadID, RunCount: runCount,
					AcknowledgementIDs: []string{"msg-asst-2"}, Restart: assert.StatusPassed,
					Suites: []assert.SuiteResult{{Suite: assert.SuiteBackgroundDelivery, Status: assert.StatusPassed}, {Suite: assert.SuiteConformance, Status: assert.StatusPassed}}}
				if diff := cmp.Diff(want, e.Verdict()); diff != "" {
					t.Errorf("verdict (-want +got):\n%s", diff)
				}
				if errs, n := e.DecodeErrors(); n != 0 {
					t.Errorf("decode errors: %v", errs)
				}
			})
		}
	}
}

// TestMutations breaks a passing stream in one place per case and checks that
// exactly the expected check fails, at the event that decides it. Every check
// id has a case except no-failed-run and child-result-kept, which the
// invariants always decide first (see synth's faults and TestUnreachableChecks
// in assert for their nearest reachable forms).
func TestMutations(t *testing.T) {
	covered := map[string]bool{}
	for _, f := range synth.Faults() {
		for _, sc := range f.Scenarios {
			covered[f.Check] = true
			t.Run(f.Name+"/"+string(sc), func(t *testing.T) {
				s := synth.MustBuild(synth.Options{Scenario: sc, Fault: f.Name})
				e := replay.NewEngine(delivery.EngineOptions(nil))
				feedAll(t, e, s.Events)
				v := e.Verdict()
				if v.Failure == nil {
					t.Fatalf("passed; want %s to fail", f.Check)
				}
				type located struct {
					Check string
					Seq   uint64
				}
				want := located{f.Check, s.At[f.At]}
				got := located{v.Failure.Check, v.Failure.Seq}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("failure (-want +got):\n%s\nverdict: %+v", diff, v.Failure)
				}
				// A protocol fault's failure is the conformance suite's: it
				// names no thread.
				conformance := slices.ContainsFunc(assert.Conformance, func(c assert.Check[*protocol.Event]) bool { return c.ID == f.Check })
				if v.Failure.Message != message(f.Check) || (v.Failure.ThreadID == "") != conformance || v.Failure.Seen == "" {
					t.Errorf("failure lacks message, thread or seen: %+v", v.Failure)
				}
			})
		}
	}
	for _, c := range assert.BackgroundDelivery.Infos() { // conformance checks: TestConformanceMutations
		if c.ID == assert.CheckNoFailedRun || c.ID == assert.CheckChildResultKept {
			continue
		}
		if !covered[c.ID] {
			t.Errorf("no mutation makes check %s fail", c.ID)
		}
	}
}

// TestSticky: once decided, later events do not change the verdict.
func TestSticky(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: "idle", Fault: "deadline"})
	e := replay.NewEngine(delivery.EngineOptions(nil))
	feedAll(t, e, s.Events)
	before := e.Verdict()
	last := s.Events[len(s.Events)-1]
	more := []bundle.Event{
		{Seq: last.Seq + 1, Kind: bundle.KindProcExit, Conn: "server", Code: 1},
		{Seq: last.Seq + 2, Kind: bundle.KindMark, Name: replay.MarkInterrupted},
		{Seq: last.Seq + 3, Kind: bundle.KindVerdict, Body: bundle.Text([]byte(`{"status":"passed"}`))},
	}
	feedAll(t, e, more)
	if diff := cmp.Diff(before, e.Verdict()); diff != "" {
		t.Errorf("verdict changed after it was decided (-before +after):\n%s", diff)
	}
}

func TestSeqGap(t *testing.T) {
	e := replay.NewEngine(delivery.EngineOptions(nil))
	if err := e.Feed(&bundle.Event{Seq: 3, Kind: bundle.KindProcLog}); err != nil {
		t.Fatal(err)
	}
	err := e.Feed(&bundle.Event{Seq: 5, Kind: bundle.KindProcLog})
	want := "event stream broken: expected seq 4, got 5"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestTruncatedReportsLastSeen: a stream cut mid-run fails stream-delivered,
// saying so and what the parent looked like last.
func TestTruncatedReportsLastSeen(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: "idle"})
	e := replay.NewEngine(delivery.EngineOptions(nil))
	feedAll(t, e, s.Events[:s.At[synth.LabelCompleted]+1])
	f := e.Verdict().Failure
	want := "the parent's subscription ended with an unknown outcome: the bundle ended before delivery was proven; last seen: runs [run-1:completed]; subagents [task-1 app_owned completed delivery=pending]"
	if f == nil || f.Check != assert.CheckStreamDelivered || f.Seen != want || f.Seq != s.At[synth.LabelCompleted] {
		t.Errorf("failure = %+v, want stream-delivered seeing %q", f, want)
	}
}

// TestStatusPhases walks the nested scenario and checks the phases the driver acts on.
func TestStatusPhases(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: "nested"})
	e := replay.NewEngine(delivery.EngineOptions(nil))
	var phases []replay.Phase
	var child string
	for i := range s.Events {
		feedAll(t, e, s.Events[i:i+1])
		st := e.Status()
		if len(phases) == 0 || phases[len(phases)-1] != st.Phase {
			phases = append(phases, st.Phase)
		}
		if st.Phase == delivery.PhaseNestedRead {
			child = st.ChildThreadID
		}
	}
	if diff := cmp.Diff([]replay.Phase{replay.PhaseRunning, delivery.PhaseNestedRead, delivery.PhaseRestart, replay.PhasePassed}, phases); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if child != synth.ChildThreadID {
		t.Errorf("ChildThreadID = %q, want %q", child, synth.ChildThreadID)
	}
	want := assert.Milestones{ParentFinished: true, NestedChildFinished: true, GateRequested: true, GateReleased: true, Delivered: true}
	if diff := cmp.Diff(want, e.Status().Milestones); diff != "" {
		t.Errorf("milestones (-want +got):\n%s", diff)
	}
}

// TestLive feeds a run through Live from another goroutine and checks the
// latest-value updates and the final verdict.
func TestLive(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: "active"})
	l := replay.NewLive(delivery.EngineOptions(nil))
	done := make(chan error, 1)
	go func() {
		for i := range s.Events {
			if err := l.Event(&s.Events[i]); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Latest-value semantics: the one buffered status is the newest.
	st := <-l.Updates()
	if st.Phase != replay.PhasePassed {
		t.Errorf("latest update phase = %q, want passed", st.Phase)
	}
	select {
	case extra := <-l.Updates():
		t.Errorf("a stale update was left behind: %+v", extra)
	default:
	}
	if v := l.Verdict(); v.Status != assert.StatusPassed {
		t.Errorf("verdict = %+v, want passed", v)
	}
}

// TestReplayFileReproduces writes recorded runs to bundles and replays them.
func TestReplayFileReproduces(t *testing.T) {
	for _, o := range []synth.Options{{Scenario: "nested"}, {Scenario: "idle", Fault: "wrong-result"}} {
		t.Run(string(o.Scenario)+o.Fault, func(t *testing.T) {
			evs, err := synth.Recorded(synth.MustBuild(o))
			if err != nil {
				t.Fatal(err)
			}
			path := t.TempDir() + "/run.zst"
			if err := synth.WriteBundle(path, evs); err != nil {
				t.Fatal(err)
			}
			res, err := replay.ReplayFile(context.Background(), path, delivery.Options(nil))
			if err != nil {
				t.Fatal(err)
			}
			var recorded assert.Verdict
			if err := json.Unmarshal(evs[len(evs)-1].Body.Data, &recorded); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(recorded, res.Verdict); diff != "" {
				t.Errorf("replayed verdict (-recorded +replayed):\n%s", diff)
			}
			if !res.Reproduced || res.Truncated || res.Events != uint64(len(evs)) {
				t.Errorf("reproduced=%v truncated=%v events=%d (want true false %d)", res.Reproduced, res.Truncated, res.Events, len(evs))
			}
		})
	}
}

func TestReplayFileUnreadable(t *testing.T) {
	_, err := replay.ReplayFile(context.Background(), t.TempDir()+"/missing.zst", delivery.Options(nil))
	if err == nil {
		t.Fatal("replaying a missing file succeeded")
	}
}

// TestDriverErrorDecides: a driver-error mark decides the run at the mark;
// after the main checks passed it is the restart read that failed.
func TestDriverErrorDecides(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: "idle"})
	mark := func(after uint64) bundle.Event {
		return bundle.Event{Seq: after + 1, T: s.Events[after].T + 1, Kind: bundle.KindMark, Name: replay.MarkDriverError,
			Body: bundle.Text([]byte(`{"step":"restart-read","error":"connection refused"}`))}
	}
	for _, tc := range []struct {
		name  string
		upTo  string // label of the last event fed before the mark
		check string
	}{
		{"before delivery", synth.LabelDelegated, assert.CheckStreamDelivered},
		{"after the restart", synth.LabelRestartReady, assert.CheckRestartRead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := replay.NewEngine(delivery.EngineOptions(nil))
			at := s.At[tc.upTo] // the seq of that event, which is also its index
			feedAll(t, e, s.Events[:at+1])
			m := mark(at)
			feedAll(t, e, []bundle.Event{m})
			f := e.Verdict().Failure
			if f == nil || f.Check != tc.check || f.Seq != m.Seq {
				t.Fatalf("failure %+v, want %s at seq %d", f, tc.check, m.Seq)
			}
			if !strings.Contains(f.Seen, "connection refused") {
				t.Errorf("seen %q does not carry the driver's error", f.Seen)
			}
		})
	}
}

// message is the catalogue's message of check id ("" for an unknown id).
func message(id string) string {
	c, _ := assert.Lookup(id)
	return c.Message
}

// TestLiveHeaderAndWaitFor: a Live fed the header knows the scenario before
// the run mark, as replay does from the file, and WaitFor returns once the
// recorder's goroutine has fed the awaited event.
func TestLiveHeaderAndWaitFor(t *testing.T) {
	l := replay.NewLive(delivery.EngineOptions(nil))
	if err := l.Header(bundle.Header{Format: bundle.FormatVersion, Manifest: bundle.Manifest{Scenario: "idle"}}); err != nil {
		t.Fatal(err)
	}
	evs := []bundle.Event{
		{Seq: 1, T: 1, Kind: bundle.KindProcStart, Conn: "server"},
		{Seq: 2, T: 2, Kind: bundle.KindProcExit, Conn: "server", Code: 4},
	}
	go func() {
		for i := range evs {
			l.Event(&evs[i])
		}
	}()
	if err := l.WaitFor(2); err != nil {
		t.Fatal(err)
	}
	v := l.Verdict()
	if v.Scenario != "idle" || v.Failure == nil || v.Failure.Check != assert.CheckServerAlive || v.Failure.Seq != 2 {
		t.Errorf("verdict %+v (failure %+v), want idle failing server-alive at seq 2", v, v.Failure)
	}
	if err := l.Event(&bundle.Event{Seq: 9, Kind: bundle.KindMark}); err == nil {
		t.Error("a seq gap was accepted")
	}
	if err := l.WaitFor(100); err == nil {
		t.Error("WaitFor on a broken engine returned no error")
	}
}

// TestClientInterruptWaitsForTheDriversMark: when the driver stops watching
// (interrupted, out of time) it interrupts its subscription, and the server's
// answer may be recorded before the driver's mark. The mark decides the run.
func TestClientInterruptWaitsForTheDriversMark(t *testing.T) {
	run, _ := json.Marshal(replay.RunInfo{Scenario: "idle", ThreadID: "th", Secret: "RESULT_1", GateURL: "http://127.0.0.1:1/g"})
	h, _ := json.Marshal(bundle.Header{Format: bundle.FormatVersion, Manifest: bundle.Manifest{Scenario: "idle"}})
	msg := func(dir bundle.Dir, s string) bundle.Event {
		return bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: dir, Type: bundle.TypeText, Body: bundle.Text([]byte(s))}
	}
	evs := []bundle.Event{
		{Kind: bundle.KindHeader, Body: bundle.Text(h)},
		{Kind: bundle.KindMark, Name: replay.MarkRun, Body: bundle.Text(run)},
		{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws?orchestrationProtocol=2"},
		msg(bundle.DirClientToServer, `{"_tag":"Request","id":1,"tag":"orchestration.subscribeThread","payload":{"threadId":"th"},"headers":[]}`),
		msg(bundle.DirClientToServer, `{"_tag":"Interrupt","requestId":1}`),
		msg(bundle.DirServerToClient, `{"_tag":"Exit","requestId":1,"exit":{"_tag":"Failure","cause":[{"_tag":"Interrupt","fiberId":3}]}}`),
		{Kind: bundle.KindMark, Name: replay.MarkInterrupted, Body: bundle.Text([]byte(`{}`))},
	}
	for i := range evs {
		evs[i].Seq, evs[i].T = uint64(i), int64(i)
	}
	e := replay.NewEngine(delivery.EngineOptions(nil))
	feedAll(t, e, evs)
	if f := e.Verdict().Failure; f == nil || f.Check != assert.CheckInterrupted || f.Seq != 6 {
		t.Errorf("failure %+v, want %s at seq 6", f, assert.CheckInterrupted)
	}
	// Without a mark, the interrupted subscription decides at the end.
	e = replay.NewEngine(delivery.EngineOptions(nil))
	feedAll(t, e, evs[:6])
	if f := e.Verdict().Failure; f == nil || f.Check != assert.CheckStreamDelivered || f.Seq != 5 {
		t.Errorf("failure %+v, want %s at seq 5", f, assert.CheckStreamDelivered)
	}
}
