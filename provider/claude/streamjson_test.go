package claude_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/provider/claude"
)

// TestResultContent: a tool_result's content reads from a string (the
// scripted provider's) and from a list of blocks (the real CLI's: text, and
// tool_reference blocks after ToolSearch), and writes as a string.
func TestResultContent(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"plain"`, "plain"},
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "a\nb"},
		{`[{"type":"tool_reference","tool_name":"mcp__t3-code__delegate_task"},{"type":"tool_reference","tool_name":"mcp__t3-code__task_status"}]`,
			"mcp__t3-code__delegate_task\nmcp__t3-code__task_status"},
		{`[]`, ""},
	} {
		var m claude.Message
		line := `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":` + tc.in + `}]}}`
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if diff := cmp.Diff(tc.want, string(m.Message.Content[0].Content)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
	var m claude.Message
	if err := json.Unmarshal([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":{"not":"content"}}]}}`), &m); err == nil {
		t.Error("an object as tool_result content decoded without an error")
	}
	b, err := json.Marshal(claude.Block{Type: "tool_result", ToolUseID: "t1", Content: "out"})
	if err != nil || string(b) != `{"type":"tool_result","tool_use_id":"t1","content":"out"}` {
		t.Errorf("written as %s, %v", b, err)
	}
}
