package model

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/model/openai"
	"github.com/wireproof/wireproof/provider/claude"
)

// The Codex CLI's shell tools (Codex 0.169.0): exec_command runs a
// command and answers its output, or, when the command still runs after
// yield_time_ms (250-30000), a session to poll with write_stdin.
const (
	CodexExec  = "exec_command"
	CodexStdin = "write_stdin"
	// codexForegroundYield is the longest wait Codex allows before a
	// command yields; a foreground call is polled on until it exits.
	codexForegroundYield = 30000
	// codexBackgroundYield marks a call the plan runs in the background
	// (native): it yields at once and is not polled.
	codexBackgroundYield = 250
	// codexPollYield is a poll's wait (an empty write_stdin waits up to
	// 300000 ms for output).
	codexPollYield = 300000
)

var (
	codexExitRe    = regexp.MustCompile(`(?m)^Process exited with code (-?\d+)`)
	codexSessionRe = regexp.MustCompile(`(?m)^Process running with session ID (\d+)`)
	codexWallRe    = regexp.MustCompile(`^Wall time: [0-9.]+ seconds\s*(?:\nOutput:)?\s*$`)
	// codexWallHeadRe is that part at the head of an output given as one
	// text (codex app-server 0.169.0 hands an MCP result over so).
	codexWallHeadRe = regexp.MustCompile(`^Wall time: [0-9.]+ seconds\r?\nOutput:\r?\n`)
)

// codexOutput splits an exec_command or write_stdin output into the
// command's output, its exit code (-1 while it runs) and its session (0
// when it has none).
func codexOutput(s string) (out string, exit int, session int) {
	exit = -1
	if m := codexExitRe.FindStringSubmatch(s); m != nil {
		exit, _ = strconv.Atoi(m[1])
	}
	if m := codexSessionRe.FindStringSubmatch(s); m != nil {
		session, _ = strconv.Atoi(m[1])
	}
	if _, after, ok := strings.Cut(s, "\nOutput:\n"); ok {
		out = after
	} else if after, ok := strings.CutPrefix(s, "Output:\n"); ok {
		out = after
	} else if exit < 0 && session == 0 {
		out = s // not the exec tool's framing: the output as it is
	}
	return out, exit, session
}

// codexCall names a Codex function: its namespace ("" for a top-level
// function) and name.
type codexCall struct{ ns, name string }

// codexView is a Responses request read as the Messages conversation the
// plans play: exec_command is the Bash tool (polls of its session folded
// into it), an MCP tool mcp__<server>__<tool>, developer messages system
// turns, Codex's own context turns (<environment_context>, AGENTS.md)
// left out.
type codexView struct {
	req   *anthropic.Request
	names map[string]codexCall // the plans' tool names -> Codex's
	// poll: a foreground command still running when the request was sent
	// (its session), with nothing after its latest output: the next turn
	// polls it.
	poll int
	// background are the background commands, in order, with what each
	// printed before it yielded.
	background []codexBackground
}

// codexBackground is a background command and its output when it yielded.
type codexBackground struct{ command, output string }

// backgroundOutput is what a background command printed when it yielded:
// the latest whose command line the message's command holds (Codex names
// it wrapped, `/bin/bash -lc '<cmd>'`), else, when T3 cut the command at
// 200 characters, the latest background command.
func (v *codexView) backgroundOutput(command string) string {
	_, cut := strings.CutSuffix(command, "...")
	for k := len(v.background) - 1; k >= 0; k-- {
		if b := v.background[k]; b.command != "" && strings.Contains(command, b.command) {
			return b.output
		}
	}
	if cut && len(v.background) > 0 {
		return v.background[len(v.background)-1].output
	}
	return ""
}

// codexContext reports a user message that is Codex's own context, not
// the user speaking.
func codexContext(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range []string{"<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions instructions>", "<skills_instructions>"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func newCodexView(r *openai.Request) *codexView {
	v := &codexView{req: &anthropic.Request{Model: r.Model, MaxTokens: 1, Stream: r.Stream}, names: map[string]codexCall{}}
	for _, f := range r.Functions() {
		name := f[1]
		switch {
		case f[0] != "":
			name = f[0] + "__" + f[1]
		case f[1] == CodexExec:
			name = "Bash"
		}
		v.names[name] = codexCall{f[0], f[1]}
		v.req.Tools = append(v.req.Tools, anthropic.Tool{Name: name})
	}
	if r.Instructions != "" {
		v.req.System = anthropic.Content{{Type: anthropic.BlockText, Text: r.Instructions}}
	}
	type shell struct {
		id         string // the exec_command's call_id
		command    string
		background bool
		out        strings.Builder
	}
	calls := map[string]string{} // call_id -> function name
	execs := map[string]*shell{} // exec_command call_id -> its shell
	sessions := map[int]*shell{} // running sessions
	stdin := map[string]int{}    // write_stdin call_id -> session
	add := func(role string, b anthropic.Block) {
		v.req.Messages = append(v.req.Messages, anthropic.Message{Role: role, Content: anthropic.Content{b}})
	}
	result := func(id, text string, isErr bool) {
		add(anthropic.RoleUser, anthropic.Block{Type: anthropic.BlockToolResult, ToolUseID: id, IsError: isErr,
			Content: anthropic.Content{{Type: anthropic.BlockText, Text: strings.TrimSpace(text)}}})
	}
	v.poll = 0
	for _, it := range r.Input {
		switch it.Type {
		case openai.ItemMessage:
			text := it.Content.Text()
			switch it.Role {
			case openai.RoleUser:
				if codexContext(text) {
					continue
				}
				add(anthropic.RoleUser, anthropic.Block{Type: anthropic.BlockText, Text: text})
			case openai.RoleAssistant:
				add(anthropic.RoleAssistant, anthropic.Block{Type: anthropic.BlockText, Text: text})
			default:
				add(anthropic.RoleSystem, anthropic.Block{Type: anthropic.BlockText, Text: text})
			}
			v.poll = 0
		case openai.ItemFunctionCall:
			var args map[string]any
			_ = json.Unmarshal([]byte(it.Arguments), &args)
			calls[it.CallID] = it.Name
			switch {
			case it.Namespace == "" && it.Name == CodexStdin:
				if n, ok := args["session_id"].(float64); ok {
					stdin[it.CallID] = int(n)
				}
				continue // a poll: folded into its command's call
			case it.Namespace == "" && it.Name == CodexExec:
				y, _ := args["yield_time_ms"].(float64)
				in := map[string]any{"command": args["cmd"]}
				cmd, _ := args["cmd"].(string)
				sh := &shell{id: it.CallID, command: cmd, background: y > 0 && y < 1000}
				if sh.background {
					in["run_in_background"] = true
				}
				execs[it.CallID] = sh
				b, _ := json.Marshal(in)
				add(anthropic.RoleAssistant, anthropic.Block{Type: anthropic.BlockToolUse, ID: it.CallID, Name: "Bash", Input: b})
			default:
				name := it.Name
				if it.Namespace != "" {
					name = it.Namespace + "__" + it.Name
				}
				add(anthropic.RoleAssistant, anthropic.Block{Type: anthropic.BlockToolUse, ID: it.CallID, Name: name, Input: json.RawMessage(orEmpty(it.Arguments))})
			}
			v.poll = 0
		case openai.ItemFunctionCallOutput:
			v.poll = 0
			sh := execs[it.CallID]
			if s, ok := stdin[it.CallID]; ok {
				sh = sessions[s]
			}
			if sh == nil {
				if calls[it.CallID] == CodexStdin {
					continue // a poll of a session this request does not hold
				}
				result(it.CallID, mcpText(it.Output), false)
				continue
			}
			out, exit, session := codexOutput(it.Output.String())
			sh.out.WriteString(out)
			switch {
			case exit >= 0:
				delete(sessions, session)
				result(sh.id, sh.out.String(), exit != 0)
			case session != 0 && sh.background:
				v.background = append(v.background, codexBackground{sh.command, sh.out.String()})
				result(sh.id, "Command running in background with ID: "+strconv.Itoa(session), false)
			case session != 0:
				sessions[session] = sh
				v.poll = session
			default:
				result(sh.id, sh.out.String(), false)
			}
		}
	}
	return v
}

func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" || !json.Valid([]byte(s)) {
		return "{}"
	}
	return s
}

// mcpText is an MCP tool's output as Codex hands it over: its content
// parts, less Codex's own "Wall time: ... Output:" part (a part of its own,
// as `codex exec` gives it, or the head of one text, as `codex app-server`
// does).
func mcpText(o openai.Output) string {
	if o.Parts == nil {
		return codexWallHeadRe.ReplaceAllString(o.Text, "")
	}
	var parts []string
	for _, p := range o.Parts {
		if p.Text != "" && !codexWallRe.MatchString(p.Text) {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// RespondCodex plays the scenarios' model turns for a Responses request
// of the Codex CLI: a pure function of the request, with the plans of
// Respond. A foreground command still running (its exec_command yielded a
// session) is polled with write_stdin until it exits; its output is then
// the Bash result the plan reads.
func RespondCodex(req *openai.Request) (Turn, openai.Item) {
	v := newCodexView(req)
	if v.poll != 0 && req.Offers("", CodexStdin) {
		t := Turn{Plan: PlanNone, Step: StepPoll, Tool: CodexStdin, Input: map[string]any{"session_id": v.poll, "chars": "", "yield_time_ms": codexPollYield}}
		if i, _ := newConversation(v.req).instruction(); i >= 0 {
			t.Plan = planOf(v.req, i)
		}
		return t, codexItem(t, v)
	}
	if t, ok := v.continuation(); ok {
		return t, codexItem(t, v)
	}
	t := Respond(v.req)
	return t, codexItem(t, v)
}

// codexContinuationRe is T3's message for a command Codex ran in the
// background, sent as the thread's next turn when the command ends
// (codexBackgroundCommandDetail): its exit code, its command (cut at 200
// characters), and the tail of its output, if it printed any.
var codexContinuationRe = regexp.MustCompile(`(?s)^Background command completed(?: \(exit (-?\d+)\))?: (.*?)(?:\n\nOutput tail:\n(.*))?$`)

// continuation plays native's wake on Codex: when the instruction is T3's
// message for a finished background command, the answer is ACK: and the
// command's output, read from the message's output tail, else from what
// the background command had printed when it yielded. A command that
// failed, or that printed nothing the plan can read, is said so.
func (v *codexView) continuation() (Turn, bool) {
	c := newConversation(v.req)
	i, first := c.instruction()
	if i < 0 {
		return Turn{}, false
	}
	m := codexContinuationRe.FindStringSubmatch(strings.TrimSpace(instructionText(v.req.Messages[i])))
	if m == nil {
		return Turn{}, false
	}
	exit, command, tail := m[1], m[2], m[3]
	if exit != "" && exit != "0" {
		return Turn{Plan: PlanNativeWake, Step: StepFailed, Text: "The background command failed (exit " + exit + "): " + strings.TrimSpace(tail)}, true
	}
	if tail == "" {
		tail = v.backgroundOutput(command)
	}
	if strings.TrimSpace(tail) == "" {
		return Turn{Plan: PlanNativeWake, Step: StepFailed, Text: "The background command's output did not arrive: " + command}, true
	}
	return answer(PlanNativeWake, strings.TrimSpace(tail), claude.ParsePrompt(first).Scenario != "child"), true
}

// StepPoll: a Codex command still runs; poll its session (write_stdin).
const StepPoll = "poll"

// planOf is the plan of the instruction at message i.
func planOf(req *anthropic.Request, i int) string {
	cut := *req
	cut.Messages = req.Messages[:i+1]
	return Respond(&cut).Plan
}

// codexItem is turn as a Codex output item (no ids yet): a message, or a
// function call of the tool's Codex name with Codex's arguments.
func codexItem(t Turn, v *codexView) openai.Item {
	if t.Tool == "" {
		return openai.Item{Type: openai.ItemMessage, Role: openai.RoleAssistant, Status: openai.StatusCompleted,
			Content: openai.Content{{Type: openai.PartOutputText, Text: t.Text}}}
	}
	c, ok := v.names[t.Tool]
	if !ok {
		c = codexCall{name: t.Tool} // a tool the request does not offer (the unknown-tool fault)
	}
	in := t.Input
	if t.Tool == "Bash" {
		y := codexForegroundYield
		if t.Input["run_in_background"] == true {
			y = codexBackgroundYield
		}
		in = map[string]any{"cmd": t.Input["command"], "yield_time_ms": y}
	}
	b, _ := json.Marshal(in)
	return openai.Item{Type: openai.ItemFunctionCall, Status: openai.StatusCompleted, Namespace: c.ns, Name: c.name, Arguments: string(b)}
}
