package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
)

// TestInspectCallsStreamJSON records a real run with the scripted provider
// (`verify --scripted-provider`, the fixture as --server-cmd) and checks
// that inspect --calls and the report list the provider processes'
// stream-json calls beside the Effect RPC ones: each control request with
// its response, each tool_use with the tool_result that names its id (both
// taken from the recorded stdio lines here), and the turns.
func TestInspectCallsStreamJSON(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runBin(t, "verify", "--scenario", "idle", "--scripted-provider", "--server-cmd", wireproofBin+" fixture", "--out", out)
	if code != 0 {
		t.Fatalf("verify exited %d\n%s\n%s", code, stdout, stderr)
	}
	paths, _ := filepath.Glob(filepath.Join(out, "*.zst"))
	if len(paths) != 1 {
		t.Fatalf("bundles %v", paths)
	}
	c, err := bundle.ReadFile(paths[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	// The calls the raw lines make: "conn id method @start..@end".
	var want []string
	starts := map[string]string{}
	for _, ev := range c.Events {
		if ev.Kind != bundle.KindStdioLine || !strings.HasPrefix(ev.Conn, "provider-") {
			continue
		}
		var l struct {
			Type      string          `json:"type"`
			RequestID json.RawMessage `json:"request_id"`
			Request   struct{ Subtype string }
			Response  struct {
				RequestID json.RawMessage `json:"request_id"`
			}
			Message struct {
				Content json.RawMessage `json:"content"`
			}
		}
		if json.Unmarshal(ev.Body.Data, &l) != nil {
			t.Fatalf("seq %d: a provider line that is not JSON: %s", ev.Seq, ev.Body.Data)
		}
		var blocks []struct {
			Type      string          `json:"type"`
			ID        json.RawMessage `json:"id"`
			Name      string          `json:"name"`
			ToolUseID json.RawMessage `json:"tool_use_id"`
		}
		_ = json.Unmarshal(l.Message.Content, &blocks)
		start := func(id json.RawMessage, method string) {
			starts[ev.Conn+string(id)] = fmt.Sprintf("%s id %s %s @%d..", ev.Conn, id, method, ev.Seq)
		}
		end := func(id json.RawMessage) {
			if s, ok := starts[ev.Conn+string(id)]; ok {
				want = append(want, fmt.Sprintf("%s@%d success", s, ev.Seq))
				delete(starts, ev.Conn+string(id))
			}
		}
		switch l.Type {
		case "control_request":
			start(l.RequestID, l.Request.Subtype)
		case "control_response":
			end(l.Response.RequestID)
		case "assistant", "user":
			for _, b := range blocks {
				switch b.Type {
				case "tool_use":
					start(b.ID, "tool_use "+b.Name)
				case "tool_result":
					end(b.ToolUseID)
				}
			}
		}
	}
	if len(want) < 4 || len(starts) != 0 {
		t.Fatalf("the recording has %d answered provider calls and %d unanswered: %v", len(want), len(starts), starts)
	}

	code, calls, stderr := runBin(t, "inspect", "--calls", paths[0])
	if code != 0 {
		t.Fatalf("inspect --calls exited %d: %s", code, stderr)
	}
	spaces := regexp.MustCompile(` +`)
	got := spaces.ReplaceAllString(calls, " ")
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("inspect --calls lacks %q:\n%s", w, calls)
		}
	}
	for _, w := range []string{"provider-1 id turn-1 turn", "provider-2 id turn-1 turn", "orchestration.launchThread", "tools/call"} {
		if !strings.Contains(got, w) {
			t.Errorf("inspect --calls lacks %q:\n%s", w, calls)
		}
	}

	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := runBin(t, "report", "-o", html, paths[0]); code != 0 {
		t.Fatalf("report exited %d: %s", code, stderr)
	}
	rep, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<td>provider-1</td>", "tool_use mcp__t3-code__delegate_task", "<td>turn-1</td>"} {
		if !strings.Contains(string(rep), w) {
			t.Errorf("the report's call table lacks %q", w)
		}
	}
}

// TestInspectCallsColumns: inspect --calls keeps its columns aligned when
// ids and connections are long (a provider's "init-<uuid>", tool_use ids,
// provider-N beside ws1): every call's span and outcome start in the same
// column.
func TestInspectCallsColumns(t *testing.T) {
	code, out, stderr := runCLI(t, "inspect", "--calls", filepath.Join("..", "..", "fixtures", "golden", "live", "idle.zst"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(out, "\n")
	n, err := strconv.Atoi(strings.TrimSuffix(lines[0], " call(s)"))
	if err != nil || n < 10 {
		t.Fatalf("first line %q, want the count of at least 10 calls", lines[0])
	}
	span := regexp.MustCompile(`  @\d+\.\.(@\d+|open) +[a-z]`)
	col, longID := -1, false
	for _, line := range lines[1 : n+1] {
		loc := span.FindStringIndex(line)
		if loc == nil {
			t.Fatalf("call line without a span: %q", line)
		}
		if col < 0 {
			col = loc[0]
		}
		if loc[0] != col {
			t.Errorf("the span starts at column %d, want %d: %q", loc[0], col, line)
		}
		longID = longID || strings.Contains(line, `id "init-`)
	}
	if !longID {
		t.Errorf("no call with a long id to align:\n%s", out)
	}
}

// TestInspectCallsAcks: an acks count is printed only for what acknowledges
// chunks (an Effect RPC stream); a Codex item's deltas are chunks no one
// acknowledges, so its line has a chunks count alone.
func TestInspectCallsAcks(t *testing.T) {
	code, out, stderr := runCLI(t, "inspect", "--calls", filepath.Join("..", "..", "protocol", "testdata", "codex-verify-idle.zst"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rpc, item bool
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, "orchestration.subscribeThread"):
			rpc = strings.Contains(line, " acks ")
		case strings.Contains(line, "item agentMessage") && strings.Contains(line, "chunks "):
			item = true
			if strings.Contains(line, " acks ") {
				t.Errorf("a Codex item with an acks count: %q", line)
			}
		}
	}
	if !rpc || !item {
		t.Errorf("want the subscription's acks and an agentMessage item's chunks (rpc %v, item %v):\n%s", rpc, item, out)
	}
}
