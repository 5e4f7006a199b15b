package claude_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/provider/claude"
	"github.com/wireproof/wireproof/verify"
)

const testGate = "http://127.0.0.1:4567/6f1c"

func TestParsePrompt(t *testing.T) {
	gate := testGate
	leaf := claude.FetchTask(gate)
	nestedTask := "Use T3 delegate_task with mode=async to delegate the following task to a grandchild, then end your initial turn. On notification read task_status and return only the grandchild result: " + leaf
	cases := []struct {
		name   string
		prompt string
		want   claude.Plan
	}{
		{"idle", verify.Prompt("idle", "claudeAgent", "m", gate), claude.Plan{Scenario: "idle", GateURL: gate, ChildTask: leaf, Ack: true}},
		{"active", verify.Prompt("active", "claudeAgent", "m", gate), claude.Plan{Scenario: "active", GateURL: gate, ParentGateURL: gate + "/parent", ChildTask: leaf, Ack: true}},
		{"native", verify.Prompt("native", "claudeAgent", "m", gate), claude.Plan{Scenario: "native", GateURL: gate, Native: true, Ack: true}},
		{"nested", verify.Prompt("nested", "claudeAgent", "m", gate), claude.Plan{Scenario: "nested", GateURL: gate, ChildTask: nestedTask, Ack: true}},
		{"leaf task", leaf, claude.Plan{Scenario: "child", GateURL: gate}},
		{"nested task", nestedTask, claude.Plan{Scenario: "child", GateURL: gate, ChildTask: leaf}},
		{"reworded idle", "Please fetch with curl --fail --silent " + gate + ". End with PARENT_RELEASED.", claude.Plan{Scenario: "idle", GateURL: gate, ChildTask: leaf, Ack: true}},
		{"reworded nested", "Delegate, and have the child delegate to a grandchild: curl --fail --silent " + gate + ".", claude.Plan{Scenario: "nested", GateURL: gate, ChildTask: nestedTask, Ack: true}},
		{"T3 wake", "Delegated task 4f0c-9a completed. Use task_status with taskId 4f0c-9a to read the result.", claude.Plan{Scenario: "wake", TaskID: "4f0c-9a", Ack: true}},
		// The wake text of T3 orchestration V2 (0bkevin/t3code, server 0.0.31), as
		// recorded against the real server: the taskId is a percent-encoded node key.
		{"T3 V2 wake", "Delegated task node:delegated-task:command%3Amcp%3Afd1282df-bc95-4cfd-82db-be67545f74f1%3Adelegate-task%3A4712b78b-4b48-4c1b-a0b1-ec51c8c5761a completed. Use task_status with taskId node:delegated-task:command%3Amcp%3Afd1282df-bc95-4cfd-82db-be67545f74f1%3Adelegate-task%3A4712b78b-4b48-4c1b-a0b1-ec51c8c5761a to read the result.", claude.Plan{Scenario: "wake", TaskID: "node:delegated-task:command%3Amcp%3Afd1282df-bc95-4cfd-82db-be67545f74f1%3Adelegate-task%3A4712b78b-4b48-4c1b-a0b1-ec51c8c5761a", Ack: true}},
		{"wake id ends a sentence", "Task finished. Call task_status with taskId t-9.", claude.Plan{Scenario: "wake", TaskID: "t-9", Ack: true}},
		{"reworded wake", "Your child finished; call task_status (taskId: \"t-17\").", claude.Plan{Scenario: "wake", TaskID: "t-17", Ack: true}},
		{"no url", "Say hello.", claude.Plan{}},
		{"taskId without task_status", "taskId 12 is a number.", claude.Plan{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, claude.ParsePrompt(c.prompt)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPromptGoldens keeps testdata/prompts (the fuzz seeds) equal to the
// live verifier's prompts, each recognised as its scenario.
func TestPromptGoldens(t *testing.T) {
	for _, scenario := range verify.Scenarios {
		t.Run(string(scenario), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "prompts", string(scenario)+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			got := verify.Prompt(scenario, "claudeAgent", "claude-sonnet-4-6", "http://127.0.0.1:40123/8c2f7a52-1a4e-4c1e-9a57-0f0e0c7d8b11")
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("prompt (-want +got):\n%s", diff)
			}
			if p := claude.ParsePrompt(string(want)); p.Scenario != string(scenario) {
				t.Errorf("golden prompt parses as %q", p.Scenario)
			}
		})
	}
}

// FuzzParsePrompt checks the recogniser never panics and keeps its promises
// on any text: URLs come from curl commands, only a /parent URL makes a
// scenario active, native plans delegate nothing, a wake names its task.
func FuzzParsePrompt(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "prompts", "*.txt"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("Delegated task x completed. Use task_status with taskId x to read the result.")
	f.Fuzz(func(t *testing.T, text string) {
		p := claude.ParsePrompt(text)
		if p.GateURL != "" && !strings.Contains(text, p.GateURL) {
			t.Errorf("gate URL %q is not in the text", p.GateURL)
		}
		if (p.Scenario == "active") != (p.ParentGateURL != "") && !p.Native && p.Scenario != "child" {
			t.Errorf("scenario %q with parent URL %q", p.Scenario, p.ParentGateURL)
		}
		if p.Native && p.ChildTask != "" {
			t.Errorf("native plan delegates %q", p.ChildTask)
		}
		if p.Scenario == "wake" && (p.TaskID == "" || !strings.Contains(text, p.TaskID)) {
			t.Errorf("wake names task %q, not in the text", p.TaskID)
		}
	})
}
