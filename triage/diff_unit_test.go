package triage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

// keyed makes a story whose steps have the given keys.
func keyed(keys string) []StoryStep {
	s := make([]StoryStep, len(keys))
	for i, k := range keys {
		s[i] = StoryStep{Index: i, key: string(k)}
	}
	return s
}

func TestAlignHunks(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       []hunk
	}{
		{"equal", "abc", "abc", nil},
		{"both empty", "", "", nil},
		{"B ends early", "abcd", "ab", []hunk{{2, 4, 2, 2}}},
		{"B saw an extra state", "abc", "abxc", []hunk{{2, 2, 2, 3}}},
		{"A saw an extra state", "abxc", "abc", []hunk{{2, 3, 2, 2}}},
		{"replaced then rejoined", "axc", "ayc", []hunk{{1, 2, 1, 2}}},
		{"parts for good", "abcd", "abxy", []hunk{{2, 4, 2, 4}}},
		{"transient then parting", "axcd", "aycz", []hunk{{1, 2, 1, 2}, {3, 4, 3, 4}}},
		{"from the start", "abc", "xyz", []hunk{{0, 3, 0, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hunks(align(keyed(tt.a), keyed(tt.b)))
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(hunk{})); d != "" {
				t.Errorf("hunks(%q, %q) mismatch (-want +got):\n%s", tt.a, tt.b, d)
			}
		})
	}
}

func TestNormalizeProjection(t *testing.T) {
	const secret = "RESULT_0b7d1c7e-7f4e-4a44-9d0c-8c1e1d2f3a4b"
	withSecret, lost := "the answer: "+secret, "curl failed"
	p := &t3.Projection{
		Runs: []t3.Run{{ID: "r1", Ordinal: 1, Status: t3.RunCompleted}, {ID: "r2", Ordinal: 2, Status: t3.RunRunning}},
		Subagents: []t3.Subagent{
			{ID: "s1", Origin: t3.OriginAppOwned, Status: t3.SubagentCompleted, Result: &withSecret, CompletionDelivery: &t3.CompletionDelivery{State: t3.DeliveryAcknowledged, ObservedByRunID: "r2"}},
			{ID: "s2", Origin: t3.OriginProviderNative, Status: t3.SubagentFailed, Result: &lost},
			{ID: "s3", Origin: t3.OriginAppOwned, Status: t3.SubagentRunning},
		},
		TurnItems: []t3.TurnItem{{ID: "i1", Type: t3.ItemUserMessage}, {ID: "i2", Type: t3.ItemNotification, Text: "ignored"}},
		Messages: []t3.Message{
			{ID: "m1", Role: t3.RoleUser, Text: "fetch http://127.0.0.1:43125/5f0e8a4e-1b2c-4d3e-8f9a-0b1c2d3e4f5a now"},
			{ID: "m2", Role: t3.RoleAssistant, Text: "ACK:" + secret},
		},
		ProviderThreads: []t3.ProviderThread{{PendingBackgroundTasks: make([]json.RawMessage, 2)}, {PendingBackgroundTasks: make([]json.RawMessage, 1)}},
	}
	want := StoryState{
		Runs: []RunState{{1, "completed"}, {2, "running"}},
		Subagents: []SubagentState{
			{Origin: "app_owned", Status: "completed", Delivery: "acknowledged", Result: SubagentResultSecret},
			{Origin: "provider_native", Status: "failed", Result: SubagentResultWithoutSecret},
			{Origin: "app_owned", Status: "running", Result: SubagentResultNone},
		},
		TurnItems: []string{"user_message", "notification"},
		Messages: []MessageState{
			{Role: "user", Text: "fetch http://127.0.0.1:<PORT>/<ID> now"},
			{Role: "assistant", Text: "ACK:<SECRET>"},
		},
		PendingBackgroundTasks: 3,
	}
	if d := cmp.Diff(want, NormalizeProjection(p, secret)); d != "" {
		t.Errorf("NormalizeProjection mismatch (-want +got):\n%s", d)
	}
}

// TestObservationSources checks the replay hook the story is built from: the
// sources it reports and that the parent's observations come in seq order.
func TestObservationSources(t *testing.T) {
	tests := []struct {
		name, path string
		want       map[string]bool // "parent source" or "child source"
	}{
		{"idle", "../fixtures/golden/live/idle.zst", map[string]bool{"parent launch": true, "parent snapshot": true, "parent getThreadProjection": true}},
		{"nested", "../fixtures/golden/live/nested.zst", map[string]bool{"parent launch": true, "parent snapshot": true, "parent getThreadProjection": true, "child nested-read": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]bool{}
			var last uint64
			hook := func(o delivery.Observation) {
				who := "child"
				if o.Parent {
					who = "parent"
					if o.Seq < last {
						t.Errorf("parent observation at seq %d after seq %d", o.Seq, last)
					}
					last = o.Seq
				}
				got[who+" "+string(o.Source)] = true
			}
			if _, err := replay.ReplayFile(context.Background(), tt.path, &replay.Options{Engine: &replay.EngineOptions{Scenarios: []replay.Scenario{delivery.Observed(hook)}}}); err != nil {
				t.Fatal(err)
			}
			for k := range got {
				if k == "child snapshot" || k == "child getThreadProjection" {
					delete(got, k) // the nested child's own progress, polled while the parent runs
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("sources mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func ExampleDiff() {
	res, err := Diff(context.Background(),
		"../fixtures/golden/live/idle.zst",
		"../fixtures/golden/live/idle-duplicate-notification.zst", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := res.Divergence
	fmt.Println("same story:", res.Same)
	fmt.Println("B failed:", res.B.Verdict.Failure.Check)
	fmt.Printf("parted at A#%d (seq %d) / B#%d (seq %d)\n", d.AIndex, d.ASeq, d.BIndex, d.BSeq)
	// The state diff is long; its changed lines say what happened.
	for _, line := range strings.Split(strings.TrimSuffix(d.Diff, "\n"), "\n") {
		if line[0] != ' ' {
			fmt.Println(line)
		}
	}
	// Output:
	// same story: false
	// B failed: single-notification
	// parted at A#4 (seq 107) / B#4 (seq 96)
	// +   notification
}
