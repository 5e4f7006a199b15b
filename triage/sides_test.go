package triage

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSideLanes: a lane per side of a run, the server, each provider
// process, the client's HTTP, MCP and the model API each apart.
func TestSideLanes(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
		// on: an event of a connection and the lane it is on
		conn, lane string
	}{
		{"../fixtures/golden/live/idle-duplicate-notification.zst",
			[]string{"server", "provider-1", "provider-2", "http", "mcp", "ws", "gate", "marks", "run"}, "h4", "mcp"},
		{"../fixtures/golden/idle-model-overloaded.zst",
			[]string{"server", "http", "model", "ws", "gate", "marks", "run"}, "h4", "model"},
		{"../fixtures/golden/idle-short-body.zst",
			[]string{"server", "http", "ws", "gate", "marks", "run"}, "h1", "http"},
	} {
		tl, err := Load(context.Background(), tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, tl.SideLanes()); diff != "" {
			t.Errorf("%s lanes (-want +got):\n%s", tc.path, diff)
		}
		checked := 0
		for _, e := range tl.Entries {
			if e.Conn == tc.conn && e.Lane == LaneHTTP {
				checked++
				if got := tl.SideOf(e); got != tc.lane {
					t.Errorf("%s: seq %d of %s is on lane %s, want %s", tc.path, e.Seq, e.Conn, got, tc.lane)
				}
			}
		}
		if checked == 0 {
			t.Errorf("%s: no HTTP event of %s", tc.path, tc.conn)
		}
	}
}
