package replay_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
)

type delegateIn struct {
	Task string `json:"task"`
}

// TestMCPSDKClientsConformance: the official Go SDK's clients, as each
// provider process runs one, against a stateful Streamable HTTP server of the
// same SDK (sessions; tool calls answered with server-sent events) that
// answers server/discover HTTP 400 with no body, as T3 does, recorded
// through the real proxy: each client's server/discover (id 1) and then its
// initialize (id 1 again) and tool call, and its DELETE at close; the second
// also holds the standalone GET stream of its session open. The plain
// recording passes protocol-conformance, and the tool calls were answered
// with server-sent events.
func TestMCPSDKClientsConformance(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t3-like", Version: "test"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "delegate_task", Description: "Delegate a task."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in delegateIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"taskId":"task-1","task":"` + in.Task + `"}`}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(body, []byte(`"server/discover"`)) {
			w.WriteHeader(http.StatusBadRequest) // no body, as T3 answers it
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
	path := recordUpstream(t, up, func(ctx context.Context, proxyURL string, _ func()) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		for i := range 2 {
			client := mcp.NewClient(&mcp.Implementation{Name: "provider", Version: "test"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proxyURL + "/mcp", HTTPClient: &http.Client{Transport: tr}, DisableStandaloneSSE: i == 0, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatalf("client %d: connect: %v", i+1, err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "delegate_task", Arguments: map[string]any{"task": "child work"}})
			if err != nil || res.IsError {
				t.Fatalf("client %d: delegate_task: %v %+v", i+1, err, res)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("client %d: close: %v", i+1, err)
			}
		}
	})

	res, ends, _ := mcpCalls(t, path)
	if res.Verdict.Status != assert.StatusPassed || len(res.Verdict.Suites) != 1 || res.Verdict.Suites[0].Status != assert.StatusPassed {
		t.Fatalf("verdict %+v (failure %+v), want protocol-conformance passed", res.Verdict, res.Verdict.Failure)
	}
	var got []string
	for _, e := range ends {
		_, rest, _ := strings.Cut(e, " ")
		got = append(got, rest)
	}
	want := []string{
		"server/discover failure (HTTP 400)", "initialize success", "tools/call success",
		"server/discover failure (HTTP 400)", "initialize success", "tools/call success",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("JSON-RPC calls ended:\n%s\nwant:\n%s", strings.Join(ends, "\n"), strings.Join(want, "\n"))
	}
	content, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	sse, sessions, deletes, gets := 0, map[string]bool{}, 0, 0
	for _, ev := range content.Events {
		switch {
		case ev.Kind == bundle.KindHTTPResponse && strings.HasPrefix(ev.Header.Get("Content-Type"), "text/event-stream"):
			sse++
		case ev.Kind == bundle.KindHTTPRequest && ev.Header.Get("Mcp-Session-Id") != "":
			sessions[ev.Header.Get("Mcp-Session-Id")] = true
			switch ev.Method {
			case http.MethodDelete:
				deletes++
			case http.MethodGet:
				gets++
			}
		}
	}
	if sse < 2 || len(sessions) != 2 || deletes != 2 {
		t.Errorf("recorded %d event-stream answers, %d sessions, %d DELETEs; want the tool calls answered as server-sent events in two sessions, each closed", sse, len(sessions), deletes)
	}
	if gets != 1 {
		t.Errorf("recorded %d GET streams, want the second client's standalone one (the SDK opens it in Connect)", gets)
	}
}
