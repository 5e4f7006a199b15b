package replay_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/replay"
)

// TestStreamJSONConformance: a provider's stream-json lines (channel
// provider-1, as verify records them) are routed to the stream-json decoder
// and judged by the protocol-conformance suite like any other protocol.
func TestStreamJSONConformance(t *testing.T) {
	const (
		initReq = `c2s {"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}`
		initOK  = `s2c {"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{}}}`
		user    = `c2s {"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}`
		toolUse = `s2c {"type":"assistant","message":{"content":[{"type":"tool_use","id":"tu1","name":"Bash","input":{}}]}}`
		toolOK  = `s2c {"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu1","content":"ok"}]}}`
		result  = `s2c {"type":"result","subtype":"success","is_error":false}`
	)
	tests := []struct {
		name  string
		lines []string
		check string // the conformance check that fails, "" if it passes
		at    int    // the index of the line it fails at
		calls []string
		errs  int
	}{
		{name: "good session", lines: []string{initReq, initOK, user, toolUse, toolOK, result},
			calls: []string{`initialize "r1" success`, `tool_use Bash "tu1" success`, "turn turn-1 success"}},
		{name: "orphan tool_result", lines: []string{initReq, initOK, user, toolOK, result},
			check: assert.CheckAnswersRequest, at: 3, calls: []string{`initialize "r1" success`, "turn turn-1 success"}},
		{name: "reused request_id", lines: []string{initReq, initReq, initOK},
			check: assert.CheckIDNotReused, at: 1, calls: []string{`initialize "r1" success`}},
		{name: "garbage line", lines: []string{user, `s2c {"type":"assistant","mess`, result},
			calls: []string{"turn turn-1 success"}, errs: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs := []bundle.Event{{Kind: bundle.KindProcStart, Conn: "provider-1"}}
			for _, l := range tc.lines {
				dir, body, _ := strings.Cut(l, " ")
				evs = append(evs, bundle.Event{Kind: bundle.KindStdioLine, Conn: "provider-1", Dir: bundle.Dir(dir), Body: bundle.Text([]byte(body))})
			}
			for i := range evs {
				evs[i].Seq, evs[i].T = uint64(i), int64(i)
			}
			var calls []string
			e := replay.NewEngine(delivery.EngineOptions(&replay.EngineOptions{OnEvent: func(ev *protocol.Event) {
				if ev.Protocol != protocol.StreamJSON {
					t.Errorf("event of %s routed to %s", ev.Conn, ev.Protocol)
				}
				if ev.Kind == protocol.KindResponse && ev.Call != nil {
					calls = append(calls, fmt.Sprintf("%s %s %s", ev.Call.Method, ev.Call.ID, ev.Call.Outcome))
				}
			}}))
			feedAll(t, e, evs)
			c := conformanceOf(t, e.Verdict())
			switch {
			case tc.check == "" && c.Failure != nil:
				t.Errorf("conformance failed: %+v", c.Failure)
			case tc.check != "" && c.Failure == nil:
				t.Errorf("conformance passed; want %s to fail", tc.check)
			case tc.check != "" && (c.Failure.Check != tc.check || c.Failure.Seq != uint64(tc.at+1)):
				t.Errorf("conformance failed %s @%d, want %s @%d: %+v", c.Failure.Check, c.Failure.Seq, tc.check, tc.at+1, c.Failure)
			}
			if diff := cmp.Diff(tc.calls, calls); diff != "" {
				t.Errorf("calls answered (-want +got):\n%s", diff)
			}
			if _, n := e.DecodeErrors(); n != tc.errs {
				t.Errorf("%d decode errors, want %d", n, tc.errs)
			}
		})
	}
}

// TestStreamJSONLiveBundles: the live golden bundles recorded by `wireproof
// verify` against a real server carry each scripted provider's stdin and
// stdout as provider-N channels; replay correlates their stream-json calls
// (the initialize control request, turns, tool_use blocks) and the
// conformance suite passes on them.
func TestStreamJSONLiveBundles(t *testing.T) {
	paths, err := filepath.Glob("../fixtures/golden/live/*.zst")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no live golden bundles: %v", err)
	}
	withProviders := 0
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			answered := map[string]int{}
			res, err := replay.ReplayFile(context.Background(), path, delivery.Options(&replay.Options{Engine: &replay.EngineOptions{OnEvent: func(ev *protocol.Event) {
				if ev.Protocol != protocol.StreamJSON {
					return
				}
				if !strings.HasPrefix(ev.Conn, "provider-") {
					t.Errorf("stream-json decoded on %s", ev.Conn)
				}
				if ev.Kind == protocol.KindResponse && ev.Call != nil {
					m, _, _ := strings.Cut(ev.Call.Method, " ")
					answered[m]++
				}
			}}}))
			if err != nil {
				t.Fatal(err)
			}
			c := conformanceOf(t, res.Verdict)
			if c.Failure != nil {
				t.Errorf("conformance failed: %+v", c.Failure)
			}
			if len(answered) == 0 {
				return
			}
			withProviders++
			if answered["initialize"] == 0 {
				t.Errorf("answered stream-json calls %v: want the initialize control request", answered)
			}
			// A run that completed answered its turns and its tool calls.
			if filepath.Base(path) == "idle.zst" && (answered["turn"] < 2 || answered["tool_use"] == 0) {
				t.Errorf("answered stream-json calls %v: want initialize, two turns (the run and the wake) and tool_use", answered)
			}
			malformed := strings.Contains(path, "malformed-line")
			for _, d := range res.DecodeErrors {
				if !malformed || !strings.HasPrefix(d.Conn, "provider-") {
					t.Errorf("undecodable @%d %s: %s", d.Seq, d.Conn, d.Err)
				}
			}
			if malformed && res.DecodeErrorCount != 1 {
				t.Errorf("%d decode errors, want the provider's malformed line", res.DecodeErrorCount)
			}
		})
	}
	if withProviders == 0 {
		t.Error("no live bundle has answered stream-json calls")
	}
}
