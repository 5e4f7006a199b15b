package triage

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFirstBad: on the failing run whose server sends the completion
// notification twice, single-notification fires where the run completes
// (seq 138) while the thread held two notifications from an earlier
// observation on; on a passing run there is no first bad state.
func TestFirstBad(t *testing.T) {
	tl, err := Load(context.Background(), "../fixtures/golden/live/idle-duplicate-notification.zst", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := tl.Replayed.Verdict.Failure
	if f == nil || f.Check != "single-notification" {
		t.Fatalf("failure %+v", f)
	}
	fb := tl.FirstBad
	if fb == nil {
		t.Fatal("no first bad state")
	}
	// Independently: the first parent projection answered with two
	// notification turn items.
	want := firstTwoNotifications(t, tl)
	if diff := cmp.Diff(FirstBad{Seq: want, T: fb.T, Source: fb.Source, Check: "single-notification", Decided: f.Seq}, *fb); diff != "" {
		t.Errorf("first bad (-want +got):\n%s", diff)
	}
	if fb.Seq >= f.Seq {
		t.Errorf("first bad seq %d is not before the deciding %d", fb.Seq, f.Seq)
	}
	ok, err := Load(context.Background(), "../fixtures/golden/live/idle.zst", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok.FirstBad != nil {
		t.Errorf("a passing run has a first bad state: %+v", ok.FirstBad)
	}
}

// firstTwoNotifications is the seq of the first message that carries a
// projection with two notification turn items, read from the messages
// themselves.
func firstTwoNotifications(t *testing.T, tl *Timeline) uint64 {
	t.Helper()
	for _, c := range tl.WS {
		for _, m := range c.Messages {
			if m.Dir == "s2c" && strings.Count(string(m.Body.Data), `"type":"notification"`) >= 2 {
				return m.Seq
			}
		}
	}
	t.Fatal("no message carries two notification items")
	return 0
}
