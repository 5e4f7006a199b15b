package claude

import (
	"regexp"
	"strings"
)

// Plan is what the scripted provider makes of one user message: the live
// verifier's launch prompt, a delegated task, or a completion wake. It is a
// pure function of the text (ParsePrompt), so the same message always plays
// the same way.
type Plan struct {
	// Scenario is idle, active, native or nested for a root prompt, "child"
	// for a delegated task, "wake" for a completion notification, "" when the
	// text was not understood.
	Scenario      string
	GateURL       string // the URL the background work fetches
	ParentGateURL string // active: the foreground URL that keeps the turn open
	ChildTask     string // the task to delegate through delegate_task; "" for none
	Native        bool   // use the provider's own background shell instead of a child
	TaskID        string // wake: the task whose result to read with task_status
	// Ack says the final answer is ACK:<result> (the verifier's root prompt
	// asks for it); a nested child returns the bare result.
	Ack bool
}

var (
	curlURL     = regexp.MustCompile(`curl --fail --silent (\S+)`)
	nativeRe    = regexp.MustCompile(`(?i)native background bash tool`)
	grandchild  = regexp.MustCompile(`(?i)delegate\b[^.]*?\bto a grandchild`)
	childTaskRe = regexp.MustCompile(`(?is)give the child this task:\s*(.*?do not retry failures\.)`)
	rootRe      = regexp.MustCompile(`ACK:|PARENT_RELEASED|/parent\b|(?i)\b(?:the|a|one) child\b`)
	// A wake names its task: "Delegated task <id> completed. Use task_status
	// with taskId <id> ...". Either spelling is enough. The id is opaque: T3
	// (orchestration V2) spells it as a percent-encoded node key such as
	// node:delegated-task:command%3Amcp%3A<uuid>%3Adelegate-task%3A<uuid>,
	// so it runs to the next space or quote, less trailing punctuation.
	wakeRe = regexp.MustCompile(`(?i)(?:taskId\s*[:=]?\s*|delegated task\s+)["'` + "`" + `]?([A-Za-z0-9](?:[^\s"'` + "`" + `]*[A-Za-z0-9])?)`)
)

// gateURLs returns the gate URL and the parent gate URL (ending in /parent)
// mentioned in curl commands of text.
func gateURLs(text string) (gate, parent string) {
	for _, m := range curlURL.FindAllStringSubmatch(text, -1) {
		u := strings.TrimRight(m[1], ".,;:)'\"`")
		if strings.HasSuffix(u, "/parent") {
			if parent == "" {
				parent = u
			}
			continue
		}
		if gate == "" {
			gate = u
		}
	}
	return gate, parent
}

// ParsePrompt reads one user message. It keys on the essentials (a curl URL,
// a taskId, the native/grandchild phrases) and tolerates any wording around
// them.
func ParsePrompt(text string) Plan {
	gate, parent := gateURLs(text)
	if gate == "" && parent == "" {
		if m := wakeRe.FindStringSubmatch(text); m != nil && strings.Contains(strings.ToLower(text), "task_status") {
			return Plan{Scenario: "wake", TaskID: m[1], Ack: true}
		}
		return Plan{}
	}
	if isChildTask(text) {
		return parseChildPrompt(text)
	}
	return parseRootPrompt(text)
}

// isChildTask tells a delegated task from a launch prompt. A launch prompt
// asks for an ACK or PARENT_RELEASED, names the native background tool or a
// /parent URL, or speaks of the child it creates; a task (a leaf's fetch or a
// nested child's delegation to a grandchild) does none of that.
func isChildTask(text string) bool {
	return !rootRe.MatchString(text) && !nativeRe.MatchString(text)
}

// parseRootPrompt reads the live verifier's prompt.
func parseRootPrompt(text string) Plan {
	p := Plan{Ack: true}
	p.GateURL, p.ParentGateURL = gateURLs(text)
	switch {
	case nativeRe.MatchString(text):
		p.Scenario, p.Native = "native", true
		return p
	case p.ParentGateURL != "":
		p.Scenario = "active"
	case grandchild.MatchString(text):
		p.Scenario = "nested"
	default:
		p.Scenario = "idle"
	}
	if m := childTaskRe.FindStringSubmatch(text); m != nil {
		p.ChildTask = strings.TrimSpace(m[1])
	} else if p.GateURL != "" {
		p.ChildTask = FetchTask(p.GateURL)
		if p.Scenario == "nested" {
			p.ChildTask = nestedTaskPrefix + p.ChildTask
		}
	}
	return p
}

const nestedTaskPrefix = "Use T3 delegate_task with mode=async to delegate the following task to a grandchild, then end your initial turn. On notification read task_status and return only the grandchild result: "

// parseChildPrompt reads a delegated task: delegate it further (nested) or
// fetch the gate in the foreground.
func parseChildPrompt(text string) Plan {
	p := Plan{Scenario: "child"}
	p.GateURL, _ = gateURLs(text)
	if grandchild.MatchString(text) && p.GateURL != "" {
		p.ChildTask = FetchTask(p.GateURL)
	}
	return p
}

// FetchTask is the task a child is given to fetch gate: the reference
// verifier's wording.
func FetchTask(gate string) string {
	return "Run curl --fail --silent " + gate + " with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. Do not read other files. Do not retry failures."
}
