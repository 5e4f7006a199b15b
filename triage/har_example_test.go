package triage_test

import (
	"context"
	"fmt"

	"github.com/wireproof/wireproof/triage"
)

// BuildHAR gives one entry per HTTP exchange and one per WebSocket
// connection, whose messages Chrome's DevTools shows.
func ExampleBuildHAR() {
	tl, err := triage.Load(context.Background(), "../fixtures/golden/live/idle-duplicate-notification.zst", nil)
	if err != nil {
		panic(err)
	}
	h := triage.BuildHAR(tl, nil)
	for _, e := range h.Log.Entries {
		fmt.Println(e.Request.Method, e.Request.URL, e.Response.Status, len(e.WSMessages))
	}
	// Output:
	// POST http://127.0.0.1:38325/oauth/token 200 0
	// POST http://127.0.0.1:38325/api/projects/mutate 200 0
	// POST http://127.0.0.1:38325/api/auth/websocket-ticket 200 0
	// GET ws://127.0.0.1:38325/ws?orchestrationProtocol=2&wsTicket=[REDACTED] 101 60
	// POST http://127.0.0.1:38325/mcp 200 0
	// POST http://127.0.0.1:38325/mcp 200 0
	// POST http://127.0.0.1:38325/mcp 200 0
	// POST http://127.0.0.1:38325/mcp 200 0
}
