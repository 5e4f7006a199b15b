package replay_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// TestMarksRoundTrip: what the driver encodes, the engine decodes to the
// same value.
func TestMarksRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		body any
		into func() any
	}{
		{replay.MarkRun, &replay.RunInfo{Scenario: assert.ScenarioNested, ThreadID: "t", Secret: "RESULT_1", GateURL: "http://127.0.0.1:1/g"}, func() any { return &replay.RunInfo{} }},
		{replay.MarkPhase, &replay.PhaseMark{Phase: replay.PhaseRestarting}, func() any { return &replay.PhaseMark{} }},
		{replay.MarkDeadline, &replay.DeadlineMark{TimeoutSeconds: 2.5, While: "starting the server"}, func() any { return &replay.DeadlineMark{} }},
		{replay.MarkInterrupted, &replay.InterruptedMark{Phase: replay.PhaseRunning, While: "running"}, func() any { return &replay.InterruptedMark{} }},
		{replay.MarkSetupFailed, &replay.StepMark{Step: "token", Error: "401"}, func() any { return &replay.StepMark{} }},
		{replay.MarkRestart, &replay.RestartMark{ThreadID: "t"}, func() any { return &replay.RestartMark{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := replay.EncodeMark(tc.name, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			got := tc.into()
			if err := replay.DecodeMark(ev, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.body, got); diff != "" {
				t.Errorf("decoded (-encoded +decoded):\n%s", diff)
			}
		})
	}
}

// TestMalformedMarks: a mark whose body does not decode, or names a
// scenario or phase that does not exist, is a decode error naming the mark,
// never read as zero values.
func TestMalformedMarks(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		into       any
		want       string
	}{
		{replay.MarkRun, `not json`, &replay.RunInfo{}, "run mark: the body is not a JSON object"},
		{replay.MarkRun, `["idle"]`, &replay.RunInfo{}, "run mark: the body is not a JSON object"},
		{replay.MarkRun, `{"scenario":7}`, &replay.RunInfo{}, "run mark: json: cannot unmarshal number"},
		{replay.MarkRun, `{"scenario":"busy"}`, &replay.RunInfo{}, `run mark: unknown scenario "busy"`},
		{replay.MarkPhase, `{"phase":"sleeping"}`, &replay.PhaseMark{}, `phase mark: unknown phase "sleeping"`},
		{replay.MarkPhase, ``, &replay.PhaseMark{}, "phase mark: the body is not a JSON object"},
		{replay.MarkDeadline, `{"timeoutSeconds":"soon"}`, &replay.DeadlineMark{}, "deadline mark: json: cannot unmarshal string"},
		{replay.MarkSetupFailed, `{"step":1}`, &replay.StepMark{}, "setup-failed mark: json: cannot unmarshal number"},
	} {
		t.Run(tc.name+" "+tc.body, func(t *testing.T) {
			ev := &bundle.Event{Kind: bundle.KindMark, Name: tc.name, Body: bundle.Text([]byte(tc.body))}
			err := replay.DecodeMark(ev, tc.into)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("DecodeMark = %v, want an error starting %q", err, tc.want)
			}
		})
	}
}

// TestMalformedMarkInBundle: the engine keeps a malformed mark as a decode
// error at its seq, and judges with what could be read: a passing run with
// a broken phase mark and an interrupted mark with a broken body.
func TestMalformedMarkInBundle(t *testing.T) {
	s := synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle})
	evs := append(append([]bundle.Event{}, s.Events[:1]...), bundle.Event{Seq: 1, Kind: bundle.KindMark, Name: replay.MarkPhase, Body: bundle.Text([]byte(`{"phase":42}`))})
	for _, ev := range s.Events[1:] {
		ev.Seq++
		evs = append(evs, ev)
	}
	e := replay.NewEngine(delivery.EngineOptions(nil))
	feedAll(t, e, evs)
	errs, n := e.DecodeErrors()
	if n != 1 || errs[0].Seq != 1 || !strings.Contains(errs[0].Err, "phase mark") {
		t.Errorf("decode errors %v (%d), want the phase mark at seq 1", errs, n)
	}
	if v := e.Verdict(); v.Status != assert.StatusPassed {
		t.Errorf("verdict %s, want passed: %+v", v.Status, v.Failure)
	}

	e = replay.NewEngine(delivery.EngineOptions(nil))
	cut := synth.MustBuild(synth.Options{Scenario: assert.ScenarioIdle}).Events
	cut = cut[:len(cut)/2]
	at := cut[len(cut)-1].Seq + 1
	feedAll(t, e, append(cut, bundle.Event{Seq: at, Kind: bundle.KindMark, Name: replay.MarkInterrupted, Body: bundle.Text([]byte(`{"while":3}`))}))
	if errs, n := e.DecodeErrors(); n != 1 || errs[0].Seq != at {
		t.Errorf("decode errors %v (%d), want the interrupted mark at seq %d", errs, n, at)
	}
	if f := e.Verdict().Failure; f == nil || f.Check != assert.CheckInterrupted || f.Seq != at {
		t.Errorf("failure %+v, want interrupted at seq %d", f, at)
	}
}
