package model

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/provider/claude"
)

// conversation is what the model reads in a request: the messages, and the
// tools it may call.
type conversation struct {
	req   *anthropic.Request
	tools map[string]bool
}

func newConversation(req *anthropic.Request) *conversation {
	c := &conversation{req: req, tools: map[string]bool{}}
	for _, t := range req.Tools {
		c.tools[t.Name] = true
	}
	return c
}

var (
	reminderRe = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)
	lineNumRe  = regexp.MustCompile(`^[ \t]*\d+(?:→|\t)(.*)$`)
	numOnlyRe  = regexp.MustCompile(`^[ \t]*\d+[ \t]*$`)
	exitNoteRe = regexp.MustCompile(`\s*\[exited with code \d+\]\s*$`)
)

// stripReminders removes the <system-reminder> sections the CLI adds to
// user turns and tool results.
func stripReminders(s string) string {
	if !strings.Contains(s, "<system-reminder>") {
		return strings.TrimSpace(s) // no copy of a long text
	}
	return strings.TrimSpace(reminderRe.ReplaceAllString(s, ""))
}

// rawText is a user or system turn's text blocks as sent, reminders
// included (the CLI delivers a background task's <task-notification>
// inside one).
func rawText(m anthropic.Message) string {
	if m.Role == anthropic.RoleAssistant {
		return ""
	}
	return m.Content.Text()
}

// humanText is what a user (or system) turn says, less the CLI's
// reminders: its text blocks (tool results are not the user speaking).
func humanText(m anthropic.Message) string {
	if m.Role == anthropic.RoleAssistant {
		return ""
	}
	var parts []string
	for _, b := range m.Content {
		if b.Type == anthropic.BlockText {
			if t := stripReminders(b.Text); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// call is a tool_use of the model since the instruction, with its result.
type call struct {
	name     string
	input    map[string]any
	answered bool
	result   string // the tool_result's text, reminders removed
	isError  bool
}

// instruction finds the latest turn that instructs the model (its index,
// -1 if none) and the first user turn's text. A user turn that says
// something is one, but a turn that carries tool results is the CLI
// answering the model: its text ("Tool loaded.") is the CLI's note, unless
// it is itself an instruction (a wake, a task notification). A system turn
// is the CLI's too (the environment, deferred tools), unless it relays an
// instruction: the CLI hands a user message sent mid-turn to the model as
// a system turn ("The user sent a new message while you were working: ...").
func (c *conversation) instruction() (latest int, first string) {
	latest = -1
	for i, m := range c.req.Messages {
		t := instructionText(m)
		_, notified := parseNotification(rawText(m))
		switch {
		case notified:
		case t == "":
			continue
		case m.Role == anthropic.RoleSystem || hasToolResult(m):
			if !isInstruction(t) {
				continue
			}
		}
		if first == "" && m.Role == anthropic.RoleUser {
			first = t
		}
		latest = i
	}
	return latest, first
}

// relayedRe finds a user message the CLI relays inside a reminder: a
// message sent while a tool ran comes back with the tool's result
// ("<system-reminder>\nThe user sent a new message while you were
// working:\n<message>\n\nThis is how Claude Code surfaces ...").
var relayedRe = regexp.MustCompile(`(?s)<system-reminder>\s*The user sent a new message while you were working:\s*(.*?)\s*(?:\n\nThis is how Claude Code surfaces|</system-reminder>)`)

// relayed returns the user messages a turn relays in its tool results'
// reminders (Claude Code 2.1.328 hands active's completion wake to the
// model this way: inside the result of the foreground request it arrived
// during), joined by newlines.
func relayed(m anthropic.Message) string {
	var out []string
	for _, b := range m.Content {
		if b.Type != anthropic.BlockToolResult {
			continue
		}
		for _, p := range b.Content {
			if p.Type != anthropic.BlockText {
				continue
			}
			for _, r := range relayedRe.FindAllStringSubmatch(p.Text, -1) {
				out = append(out, r[1])
			}
		}
	}
	return strings.Join(out, "\n")
}

// instructionText is what a turn says to the model: its own text, or,
// when that asks for nothing, an instruction its tool results relay.
func instructionText(m anthropic.Message) string {
	t := humanText(m)
	if isInstruction(t) || !hasToolResult(m) {
		return t
	}
	if r := relayed(m); isInstruction(r) {
		return r
	}
	return t
}

func hasToolResult(m anthropic.Message) bool {
	for _, b := range m.Content {
		if b.Type == anthropic.BlockToolResult {
			return true
		}
	}
	return false
}

// isInstruction reports whether text asks for something a plan covers.
func isInstruction(text string) bool {
	return claude.ParsePrompt(text).Scenario != ""
}

// callsSince lists the tool calls made after message i, in order, each with
// its result when one came.
func (c *conversation) callsSince(i int) []call {
	var calls []call
	byID := map[string]int{}
	for _, m := range c.req.Messages[i+1:] {
		for _, b := range m.Content {
			switch {
			case m.Role == anthropic.RoleAssistant && b.Type == anthropic.BlockToolUse:
				var in map[string]any
				_ = json.Unmarshal(b.Input, &in)
				byID[b.ID] = len(calls)
				calls = append(calls, call{name: b.Name, input: in})
			case m.Role == anthropic.RoleUser && b.Type == anthropic.BlockToolResult:
				k, ok := byID[b.ToolUseID]
				if !ok {
					continue
				}
				calls[k].answered = true
				calls[k].result = resultText(b)
				calls[k].isError = b.IsError
			}
		}
	}
	return calls
}

// resultText is a tool_result's text content, reminders removed.
func resultText(b anthropic.Block) string {
	var parts []string
	for _, p := range b.Content {
		if p.Type == anthropic.BlockText {
			parts = append(parts, p.Text)
		}
	}
	return stripReminders(strings.Join(parts, "\n"))
}

// fileText is what a file read through the Read tool holds: the CLI's line
// numbers ("1→", "1\t") and a background task's exit note
// ("[exited with code 0]") removed.
func fileText(s string) string {
	s = reminderRe.ReplaceAllString(s, "")
	lines := strings.Split(s, "\n")
	if m := lineNumRe.FindStringSubmatch(lines[0]); m != nil {
		for k, l := range lines {
			if m := lineNumRe.FindStringSubmatch(l); m != nil {
				lines[k] = m[1]
			} else if strings.TrimSpace(l) != "" && !numOnlyRe.MatchString(l) {
				break // not the CLI's numbering after all
			} else {
				lines[k] = ""
			}
		}
	}
	s = strings.TrimSpace(strings.Join(lines, "\n"))
	return strings.TrimSpace(exitNoteRe.ReplaceAllString(s, ""))
}

// tool finds the tool to call for a name: the exact name, or an MCP tool
// mcp__<server>__<name> (the t3-code server's first).
func (c *conversation) tool(name string) (string, bool) {
	if c.tools[name] {
		return name, true
	}
	if n := "mcp__t3-code__" + name; c.tools[n] {
		return n, true
	}
	for _, t := range c.req.Tools {
		if strings.HasPrefix(t.Name, "mcp__") && strings.HasSuffix(t.Name, "__"+name) {
			return t.Name, true
		}
	}
	return "", false
}

var deferredRe = regexp.MustCompile(`mcp__[A-Za-z0-9_.-]+?__[A-Za-z0-9_-]+`)

// deferred finds an MCP tool the CLI offers only by name (a deferred tool,
// loaded with ToolSearch): named in the system prompt or a message, not in
// the request's tools.
func (c *conversation) deferred(name string) (string, bool) {
	seen := func(text string) (string, bool) {
		for _, m := range deferredRe.FindAllString(text, -1) {
			if strings.HasSuffix(m, "__"+name) {
				return m, true
			}
		}
		return "", false
	}
	if n, ok := seen(c.req.System.Text()); ok {
		return n, true
	}
	for _, m := range c.req.Messages {
		if m.Role == anthropic.RoleAssistant {
			continue
		}
		if n, ok := seen(m.Content.Text()); ok {
			return n, true
		}
	}
	return "", false
}
