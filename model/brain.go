package model

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/provider/claude"
)

// Plans: what the latest instruction asks for (Turn.Plan).
const (
	PlanIdle       = "idle"        // delegate, then PARENT_RELEASED
	PlanActive     = "active"      // delegate, then the foreground /parent request
	PlanNative     = "native"      // a background Bash task, then PARENT_RELEASED
	PlanNested     = "nested"      // delegate a task that delegates again, then PARENT_RELEASED
	PlanChild      = "child"       // a delegated task: fetch the gate (or delegate to a grandchild)
	PlanWake       = "wake"        // a completion wake: task_status, then ACK:<result>
	PlanNativeWake = "native-wake" // a <task-notification>: read the output file, then ACK:<output>
	PlanSide       = "side"        // a request of the CLI's own (title, topic): a short answer
	PlanNone       = "none"        // nothing understood: a short answer
)

// Steps: what one turn does (Turn.Step).
const (
	StepToolSearch  = "tool-search"  // load deferred MCP tools with ToolSearch
	StepDelegate    = "delegate"     // delegate_task mode=async
	StepFetch       = "fetch"        // Bash curl of the gate, foreground
	StepFetchParent = "fetch-parent" // Bash curl of the /parent gate, foreground (active)
	StepBackground  = "background"   // Bash curl with run_in_background (native)
	StepStatus      = "status"       // task_status
	StepReadOutput  = "read-output"  // Read of a background task's output file
	StepRelease     = "release"      // PARENT_RELEASED
	StepAnswer      = "answer"       // the final answer (ACK:<result>, or the bare result)
	StepWait        = "wait"         // active: the foreground request ended before the wake
	StepFailed      = "failed"       // a tool failed: say so and stop
	StepMissingTool = "missing-tool" // a tool the plan needs is not offered
	StepReply       = "reply"        // a short answer to what has no plan
)

// Turn is what the model does next: call one tool (Tool, Input), or answer
// Text and end its turn.
type Turn struct {
	Plan, Step string
	Text       string
	Tool       string
	Input      map[string]any
	// First: the first turn of a root instruction (idle, active, native,
	// nested), where the fault modes strike.
	First bool
}

// Respond plays the scenarios' model turns: a pure function of the
// request. The latest user turn that says something (less the CLI's
// <system-reminder> sections) is the instruction and picks the plan; the
// tool calls made since then, and their results, pick the step. Tool names
// come from the request's tools (an MCP tool the CLI defers is loaded with
// ToolSearch first). Whether the final answer is ACK:<result> or the bare
// result depends on the conversation's first instruction: a delegated task
// answers bare.
func Respond(req *anthropic.Request) Turn {
	c := newConversation(req)
	i, first := c.instruction()
	if i < 0 {
		return Turn{Plan: PlanNone, Step: StepReply, Text: "I found no task to run in this message."}
	}
	text := instructionText(req.Messages[i])
	calls := c.callsSince(i)
	ack := claude.ParsePrompt(first).Scenario != "child"
	if n, ok := parseNotification(rawText(req.Messages[i])); ok {
		return c.nativeWake(n, calls, ack)
	}
	p := claude.ParsePrompt(text)
	switch {
	case p.Scenario == "wake":
		return c.wake(p.TaskID, calls, ack)
	case p.Native:
		return c.native(p, calls)
	case p.ChildTask != "":
		return c.delegate(p, calls)
	case p.Scenario == "child" && p.GateURL != "":
		return c.fetchChild(p, calls)
	}
	return side(req, text)
}

// find returns the first call of tool since the instruction.
func find(calls []call, tool string, match func(call) bool) *call {
	for k := range calls {
		if calls[k].name == tool && (match == nil || match(calls[k])) {
			return &calls[k]
		}
	}
	return nil
}

// mcpTool resolves an MCP tool of the plan: the offered tool's name, or a
// ToolSearch turn that loads it (and the other T3 tool) when the CLI defers
// it, or a turn that says it is missing.
func (c *conversation) mcpTool(plan, name string, calls []call) (string, *Turn) {
	if n, ok := c.tool(name); ok {
		return n, nil
	}
	search, hasSearch := c.tool("ToolSearch")
	n, deferred := c.deferred(name)
	if hasSearch && deferred && find(calls, search, nil) == nil {
		names := []string{n}
		for _, other := range []string{"delegate_task", "task_status"} {
			if o, ok := c.deferred(other); ok && o != n {
				names = append(names, o)
			}
		}
		return "", &Turn{Plan: plan, Step: StepToolSearch, Tool: search, Input: map[string]any{"query": "select:" + strings.Join(names, ","), "max_results": len(names)}}
	}
	msg := "I cannot do this: the tool " + name + " is not available to me."
	return "", &Turn{Plan: plan, Step: StepMissingTool, Text: msg}
}

// bashTool is the Bash tool, or a turn that says it is missing.
func (c *conversation) bashTool(plan string) (string, *Turn) {
	if n, ok := c.tool("Bash"); ok {
		return n, nil
	}
	return "", &Turn{Plan: plan, Step: StepMissingTool, Text: "I cannot do this: the Bash tool is not available to me."}
}

func curlCommand(url string) string { return "curl --fail --silent " + url }

// bashTimeout is the foreground Bash call's timeout in milliseconds (the
// most the CLI allows, as the verifier's prompt asks).
const bashTimeout = 600000

// delegate: a root (idle, active, nested) or a nested child delegates its
// task, then ends its turn (active: after the foreground /parent request).
func (c *conversation) delegate(p claude.Plan, calls []call) Turn {
	plan := p.Scenario
	root := plan != "child"
	name, t := c.mcpTool(plan, "delegate_task", calls)
	if t != nil {
		t.First = root && len(calls) == 0
		return *t
	}
	d := find(calls, name, nil)
	if d == nil {
		return Turn{Plan: plan, Step: StepDelegate, Tool: name, Input: map[string]any{"task": p.ChildTask, "mode": "async"}, First: root && len(calls) == 0}
	}
	if d.isError || !d.answered {
		return Turn{Plan: plan, Step: StepFailed, Text: "Delegation failed: " + d.result}
	}
	switch {
	case p.ParentGateURL != "":
		bash, t := c.bashTool(plan)
		if t != nil {
			return *t
		}
		cmd := curlCommand(p.ParentGateURL)
		if find(calls, bash, func(k call) bool { return k.input["command"] == cmd }) == nil {
			return Turn{Plan: plan, Step: StepFetchParent, Tool: bash, Input: map[string]any{"command": cmd, "timeout": bashTimeout, "description": "Keep the turn active until the completion arrives"}}
		}
		return Turn{Plan: plan, Step: StepWait, Text: "The foreground request returned; waiting for the completion notification."}
	case !root:
		return Turn{Plan: plan, Step: StepRelease, Text: "Delegated the task to a grandchild; waiting for its completion."}
	}
	return Turn{Plan: plan, Step: StepRelease, Text: "PARENT_RELEASED"}
}

// fetchChild: a delegated leaf task fetches the gate in the foreground and
// answers its output.
func (c *conversation) fetchChild(p claude.Plan, calls []call) Turn {
	bash, t := c.bashTool(PlanChild)
	if t != nil {
		return *t
	}
	cmd := curlCommand(p.GateURL)
	b := find(calls, bash, func(k call) bool { return k.input["command"] == cmd })
	if b == nil {
		return Turn{Plan: PlanChild, Step: StepFetch, Tool: bash, Input: map[string]any{"command": cmd, "timeout": bashTimeout, "description": "Fetch the gate URL"}}
	}
	if b.isError {
		return Turn{Plan: PlanChild, Step: StepFailed, Text: b.result}
	}
	return Turn{Plan: PlanChild, Step: StepAnswer, Text: b.result}
}

// native: the gate fetched by a background Bash task, then the turn ends.
func (c *conversation) native(p claude.Plan, calls []call) Turn {
	bash, t := c.bashTool(PlanNative)
	if t != nil {
		t.First = len(calls) == 0
		return *t
	}
	cmd := curlCommand(p.GateURL)
	b := find(calls, bash, func(k call) bool { return k.input["command"] == cmd })
	if b == nil {
		return Turn{Plan: PlanNative, Step: StepBackground, Tool: bash, Input: map[string]any{"command": cmd, "run_in_background": true, "description": "Fetch the gate URL in the background"}, First: len(calls) == 0}
	}
	if b.isError {
		return Turn{Plan: PlanNative, Step: StepFailed, Text: "The background command could not start: " + b.result}
	}
	return Turn{Plan: PlanNative, Step: StepRelease, Text: "PARENT_RELEASED"}
}

// wake: task_status of the task the wake names, then the answer.
func (c *conversation) wake(taskID string, calls []call, ack bool) Turn {
	name, t := c.mcpTool(PlanWake, "task_status", calls)
	if t != nil {
		return *t
	}
	s := find(calls, name, nil)
	if s == nil {
		return Turn{Plan: PlanWake, Step: StepStatus, Tool: name, Input: map[string]any{"taskId": taskID}}
	}
	if s.isError || !s.answered {
		return Turn{Plan: PlanWake, Step: StepFailed, Text: "task_status failed: " + s.result}
	}
	return answer(PlanWake, claude.TaskField(s.result, "result", "summary"), ack)
}

func answer(plan, result string, ack bool) Turn {
	if ack {
		result = "ACK:" + result
	}
	return Turn{Plan: plan, Step: StepAnswer, Text: result}
}

// notification is a <task-notification> user turn: a background task ended.
type notification struct {
	taskID, status, outputFile, result string
}

var tagRe = regexp.MustCompile(`(?s)<(task-id|status|output-file|result|summary)>(.*?)</(?:task-id|status|output-file|result|summary)>`)

func parseNotification(text string) (notification, bool) {
	start := strings.Index(text, "<task-notification>")
	if start < 0 {
		return notification{}, false
	}
	var n notification
	for _, m := range tagRe.FindAllStringSubmatch(text[start:], -1) {
		v := strings.TrimSpace(m[2])
		switch m[1] {
		case "task-id":
			n.taskID = v
		case "status":
			n.status = v
		case "output-file":
			n.outputFile = v
		case "result":
			n.result = v
		}
	}
	return n, true
}

// nativeWake: read the finished task's output file, then the answer.
func (c *conversation) nativeWake(n notification, calls []call, ack bool) Turn {
	if n.outputFile == "" {
		return answer(PlanNativeWake, n.result, ack)
	}
	read, ok := c.tool("Read")
	if !ok {
		return Turn{Plan: PlanNativeWake, Step: StepMissingTool, Text: "I cannot do this: the Read tool is not available to me."}
	}
	r := find(calls, read, func(k call) bool { return k.input["file_path"] == n.outputFile })
	if r == nil {
		return Turn{Plan: PlanNativeWake, Step: StepReadOutput, Tool: read, Input: map[string]any{"file_path": n.outputFile}}
	}
	if r.isError {
		return Turn{Plan: PlanNativeWake, Step: StepFailed, Text: "Reading the task output failed: " + r.result}
	}
	return answer(PlanNativeWake, fileText(r.result), ack)
}

// side answers what no plan covers: the CLI's own requests (a title, a
// topic check) shortly, in the shape they ask for; anything else with a
// sentence saying there is nothing to run.
func side(req *anthropic.Request, text string) Turn {
	sys := strings.ToLower(req.System.Text())
	low := strings.ToLower(text)
	switch {
	case len(req.Tools) > 0:
		// The CLI's own requests offer no tools; a conversation does.
	case strings.Contains(sys, "isnewtopic") || strings.Contains(low, "isnewtopic"):
		return Turn{Plan: PlanSide, Step: StepReply, Text: `{"isNewTopic": false, "title": null}`}
	case strings.Contains(sys, "title") || strings.Contains(low, "title for"):
		return Turn{Plan: PlanSide, Step: StepReply, Text: "Background delivery check"}
	case strings.Contains(sys, "summar") || strings.Contains(low, "summar"):
		return Turn{Plan: PlanSide, Step: StepReply, Text: "A background-delivery verification run."}
	}
	return Turn{Plan: PlanNone, Step: StepReply, Text: fmt.Sprintf("I found no task to run in this message (%d characters).", len(text))}
}
