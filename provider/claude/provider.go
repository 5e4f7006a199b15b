package claude

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Options are the process's surroundings. Nil fields mean the real ones.
type Options struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment (EnvFault, EnvTap, EnvMCPProxy, ...).
	Getenv func(string) string
	// HTTPClient makes the gate requests and the MCP calls; nil means a
	// client without proxy or keep-alives.
	HTTPClient *http.Client
	// TempDir holds the background tasks' output files; "" means the
	// system's temp dir. The files are removed when the process ends.
	TempDir string
	// Pid is reported to the tap; 0 means os.Getpid().
	Pid int
	// Argv is the whole command line reported to the tap; nil means os.Args.
	Argv []string
}

// ErrCrashed is returned by Run when the crash fault ended the process: the
// caller exits with a non-zero status, as a crashed CLI would.
var ErrCrashed = errors.New("scripted provider: crashed on purpose (fault " + FaultCrashMidTurn + ")")

// Run plays the Claude CLI for args until stdin ends or ctx is cancelled
// (SIGTERM). With --version it prints the version and returns. It starts no
// process: the Bash tool's requests are made in-process, so it can leave no
// child behind.
func Run(ctx context.Context, args []string, opts *Options) error {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	}
	if o.Pid == 0 {
		o.Pid = os.Getpid()
	}
	cfg, err := ParseArgs(args)
	if err != nil {
		return err
	}
	if cfg.Version {
		_, err := fmt.Fprintf(o.Stdout, "%s (Claude Code)\n", Version)
		return err
	}
	s := newSession(cfg, &o)
	if len(cfg.Unknown) > 0 {
		s.logf("ignoring arguments I do not know: %q", cfg.Unknown)
	}
	if u := o.Getenv(EnvTap); u != "" {
		argv := o.Argv
		if argv == nil {
			argv = os.Args
		}
		s.tap = NewTap(u, o.HTTPClient, TapFrame{Argv: argv, Pid: o.Pid}, s.logf)
	}
	err = s.run(ctx)
	code := 0
	if err != nil {
		code = 1
	}
	s.tap.Close(code, "")
	return err
}

// session is one provider process's conversation.
type session struct {
	cfg    Config
	o      *Options
	fault  string
	id     string
	tools  mcpTools
	tap    *Tap
	outMu  sync.Mutex
	out    *bufio.Writer
	logMu  sync.Mutex
	inited bool
	ack    bool // answers end in ACK:<result> (a root); false for a child
	turns  int
	seq    int
	tmp    string // background task output files, made on first use

	users chan string    // user turns, in order; closed at stdin's end
	eof   chan struct{}  // closed at stdin's end
	notes chan bgDone    // finished background tasks
	bg    sync.WaitGroup // background tasks
}

// bgDone is a background task that finished.
type bgDone struct {
	taskID, toolUseID, command, output string
	ok                                 bool
}

func newSession(cfg Config, o *Options) *session {
	id := cfg.SessionID
	if id == "" {
		id = cfg.Resume
	}
	if id == "" {
		id = newID()
	}
	return &session{cfg: cfg, o: o, fault: o.Getenv(EnvFault), id: id, ack: true,
		out:   bufio.NewWriter(o.Stdout),
		tools: mcpTools{servers: cfg.MCPServers, hc: o.HTTPClient, proxy: o.Getenv(EnvMCPProxy), upstream: o.Getenv(EnvMCPUpstream)},
		users: make(chan string, 16), notes: make(chan bgDone, 4), eof: make(chan struct{})}
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func (s *session) logf(format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.o.Stderr, "wireproof provider claude: "+format+"\n", args...)
}

// emit writes one stdout line (and sends it to the tap).
func (s *session) emit(m Message) {
	if m.SessionID == "" && m.Type != TypeControlResponse {
		m.SessionID = s.id
	}
	if m.UUID == "" && m.Type != TypeControlResponse {
		m.UUID = newID()
	}
	b, err := json.Marshal(m)
	if err != nil {
		s.logf("encoding a %s line: %v", m.Type, err)
		return
	}
	s.writeLine(string(b))
}

func (s *session) writeLine(line string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	s.tap.Send(TapFrame{Dir: TapOut, Line: line})
	s.out.WriteString(line)
	s.out.WriteByte('\n')
	if err := s.out.Flush(); err != nil {
		s.logf("writing stdout: %v", err)
	}
}

// run reads stdin on a goroutine (control requests are answered there, at
// once, even mid-turn) and plays turns on this one, one at a time.
func (s *session) run(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer func() {
		cancel()
		s.bg.Wait()
		s.tools.close()
		if s.tmp != "" {
			os.RemoveAll(s.tmp)
		}
	}()
	go s.read(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case text, ok := <-s.users:
			if !ok {
				return nil
			}
			if err := s.turn(ctx, text); err != nil {
				return err
			}
		case n := <-s.notes:
			s.autoTurn(ctx, n)
		}
	}
}

// read handles stdin: control requests are answered, user turns queued.
func (s *session) read(ctx context.Context) {
	defer close(s.eof)
	defer close(s.users)
	sc := bufio.NewScanner(s.o.Stdin)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		s.tap.Send(TapFrame{Dir: TapIn, Line: line})
		var m Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			s.logf("stdin line is not JSON (%v): %.200q", err, line)
			continue
		}
		switch m.Type {
		case TypeControlRequest:
			s.control(m)
		case TypeUser:
			text := ""
			if m.Message != nil {
				text = m.Message.Content.Text()
			}
			select {
			case s.users <- text:
			case <-ctx.Done():
				return
			}
		case TypeControlResponse:
			// Answers to requests we never make: nothing to do.
		default:
			s.logf("ignoring a stdin line of type %q", m.Type)
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		s.logf("reading stdin: %v", err)
	}
}

// control answers a control request.
func (s *session) control(m Message) {
	sub := ""
	if m.Request != nil {
		sub = m.Request.Subtype
	}
	var body any = struct{}{}
	switch sub {
	case "initialize":
		body = InitializeResponse{
			Commands: []json.RawMessage{}, Agents: []json.RawMessage{}, OutputStyle: "default",
			AvailableOutputStyles: []string{"default"},
			Models: []ModelInfo{
				{Value: "default", DisplayName: "Default (recommended)", Description: "Scripted model"},
				{Value: "claude-sonnet-4-6", DisplayName: "Sonnet", Description: "Scripted model"},
				{Value: "claude-opus-4-6", DisplayName: "Opus", Description: "Scripted model"},
			},
			Account: Account{Email: "scripted-provider@wireproof.invalid", SubscriptionType: "max", TokenSource: "wireproof", APIProvider: "firstParty"},
		}
	case "interrupt", "set_model", "set_permission_mode", "set_max_thinking_tokens", "mcp_status", "can_use_tool":
	default:
		s.logf("answering an unknown control request %q with an empty success", sub)
	}
	raw, _ := json.Marshal(body)
	s.emit(Message{Type: TypeControlResponse, Response: &ControlResponse{Subtype: "success", RequestID: m.RequestID, Response: raw}})
}

// init emits system/init before the first output of the session.
func (s *session) init(ctx context.Context) {
	if s.inited {
		return
	}
	s.inited = true
	var servers []MCPStatus
	for _, name := range s.tools.serverNames() {
		st := "connected"
		if _, err := s.tools.session(ctx, name); err != nil {
			st = "failed"
			s.logf("%v", err)
		}
		servers = append(servers, MCPStatus{Name: name, Status: st})
	}
	tools := []string{"Bash", "Read"}
	for _, n := range s.tools.serverNames() {
		tools = append(tools, "mcp__"+n+"__delegate_task", "mcp__"+n+"__task_status")
	}
	cwd, _ := os.Getwd()
	model := s.cfg.Model
	if model == "" {
		model = "claude-sonnet-4-6"
	}
	s.emit(Message{Type: TypeSystem, Subtype: SubtypeInit, Cwd: cwd, Tools: tools, MCPServers: servers, Model: model,
		PermissionMode: "default", APIKeySource: "none", ClaudeVersion: Version})
}

func (s *session) say(text string) {
	s.emit(Message{Type: TypeAssistant, Message: &Turn{Role: "assistant", ID: "msg_" + newID(), Model: s.cfg.Model, Content: Content{{Type: "text", Text: text}}}, ParentToolUseID: json.RawMessage("null")})
}

func (s *session) toolUse(name string, input any) string {
	s.seq++
	id := fmt.Sprintf("toolu_%02d_%s", s.seq, strings.ReplaceAll(newID(), "-", "")[:20])
	raw, _ := json.Marshal(input)
	s.emit(Message{Type: TypeAssistant, Message: &Turn{Role: "assistant", ID: "msg_" + newID(), Model: s.cfg.Model, Content: Content{{Type: "tool_use", ID: id, Name: name, Input: raw}}}, ParentToolUseID: json.RawMessage("null")})
	return id
}

func (s *session) toolResult(id, content string, isError bool) {
	s.emit(Message{Type: TypeUser, Message: &Turn{Role: "user", Content: Content{{Type: "tool_result", ToolUseID: id, Content: ResultContent(content), IsError: isError}}}, ParentToolUseID: json.RawMessage("null")})
}

func (s *session) result(text string, isError bool, origin *Origin, start time.Time) {
	s.turns++
	sub := "success"
	s.emit(Message{Type: TypeResult, Subtype: sub, IsError: &isError, NumTurns: s.turns, Result: &text, DurationMS: time.Since(start).Milliseconds(), Origin: origin})
}

// mcpCall is one MCP tool call shown as the CLI shows it: a tool_use named
// mcp__<server>__<tool>, then its tool_result.
func (s *session) mcpCall(ctx context.Context, tool string, args map[string]any) (string, bool) {
	server, ok := s.tools.serverFor()
	if !ok {
		id := s.toolUse("mcp__t3-code__"+tool, args)
		msg := "No MCP server is configured (--mcp-config), so " + tool + " is not available."
		s.toolResult(id, msg, true)
		s.logf("%s", msg)
		return msg, false
	}
	id := s.toolUse("mcp__"+server+"__"+tool, args)
	text, isErr, err := s.tools.call(ctx, server, tool, args)
	if err != nil {
		if ctx.Err() != nil {
			return "", false
		}
		text, isErr = err.Error(), true
		s.logf("MCP %s: %v", tool, err)
	}
	s.toolResult(id, text, isErr)
	return text, !isErr
}

// bash runs `curl --fail --silent url` in the foreground, shown as a Bash
// tool call, within the tool call's timeout; it returns the output (or curl's error) and whether it worked.
func (s *session) bash(ctx context.Context, url string) (string, bool) {
	cmd := "curl --fail --silent " + url
	id := s.toolUse("Bash", map[string]any{"command": cmd, "timeout": bashTimeout.Milliseconds(), "description": "Fetch " + url})
	if s.fault == FaultToolNeverReturns && !s.ack {
		s.logf("fault %s: the Bash tool call never returns", s.fault)
		s.hang(ctx)
		return "", false
	}
	out, err := bashCurl(ctx, s.o.HTTPClient, url, toolTimeout(s.o.Getenv, bashTimeout))
	if ctx.Err() != nil {
		return "", false
	}
	if err != nil {
		s.toolResult(id, err.Error(), true)
		return err.Error(), false
	}
	s.toolResult(id, out, false)
	return out, true
}

// hang blocks as a hung provider does, until SIGTERM or stdin's end: a
// provider whose server is gone must not outlive it.
func (s *session) hang(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.eof:
	}
}

// turn plays one user turn.
func (s *session) turn(ctx context.Context, text string) error {
	start := time.Now()
	p := ParsePrompt(text)
	first := s.turns == 0 && !s.inited
	if first {
		s.ack = p.Scenario != "child"
	}
	s.init(ctx)
	if first && s.ack && s.fault == FaultStalledParent {
		s.logf("fault %s: hanging in the first turn", s.fault)
		s.hang(ctx)
		return nil
	}
	switch {
	case p.Scenario == "wake":
		s.answerWake(ctx, p.TaskID, start)
	case p.Native:
		return s.native(ctx, p, start)
	case p.ChildTask != "":
		return s.delegate(ctx, p, start)
	case p.Scenario == "child" && p.GateURL != "":
		s.fetchChild(ctx, p, start)
	default:
		s.logf("did not understand the user message (no gate URL, no taskId): %.300q", text)
		s.say("I found no task to run in this message.")
		s.result("I found no task to run in this message.", false, nil, start)
	}
	return nil
}

// delegate plays a turn that delegates p.ChildTask: a root (idle, active,
// nested) or a nested child.
func (s *session) delegate(ctx context.Context, p Plan, start time.Time) error {
	text, ok := s.mcpCall(ctx, "delegate_task", map[string]any{"task": p.ChildTask, "mode": "async"})
	if ctx.Err() != nil {
		return nil
	}
	if !ok {
		s.say("Delegation failed: " + text)
		s.result("Delegation failed: "+text, true, nil, start)
		return nil
	}
	taskID := TaskField(text, "taskId", "task_id", "id")
	if s.fault == FaultCrashMidTurn && s.ack {
		s.logf("fault %s: exiting in the middle of the turn", s.fault)
		return ErrCrashed
	}
	switch {
	case p.ParentGateURL != "":
		// Active: the foreground request keeps the turn open; the completion
		// arrives as a user message inside it.
		s.bash(ctx, p.ParentGateURL)
		for ctx.Err() == nil {
			var next string
			var open bool
			select {
			case next, open = <-s.users:
			case <-ctx.Done():
				return nil
			}
			if !open {
				return nil
			}
			if w := ParsePrompt(next); w.Scenario == "wake" {
				s.answerWake(ctx, w.TaskID, start)
				return nil
			}
			s.logf("waiting for the completion of task %s; ignoring the message %.200q", taskID, next)
		}
	case p.Scenario == "child":
		msg := "Delegated the task to a grandchild; waiting for its completion."
		s.say(msg)
		s.result(msg, false, nil, start)
	default:
		s.say("PARENT_RELEASED")
		s.result("PARENT_RELEASED", false, nil, start)
	}
	return nil
}

// answerWake plays a completion wake: task_status, then the answer.
func (s *session) answerWake(ctx context.Context, taskID string, start time.Time) {
	text, ok := s.mcpCall(ctx, "task_status", map[string]any{"taskId": taskID})
	if ctx.Err() != nil {
		return
	}
	if !ok {
		s.say("task_status failed: " + text)
		s.result("task_status failed: "+text, true, nil, start)
		return
	}
	result := TaskField(text, "result", "summary")
	answer := result
	if s.ack {
		answer = "ACK:" + result
	}
	s.say(answer)
	s.result(answer, false, nil, start)
}

// fetchChild plays a leaf child: the gate request as a Bash tool call, its
// output as the final answer.
func (s *session) fetchChild(ctx context.Context, p Plan, start time.Time) {
	if s.fault == FaultEarlyChildResult {
		msg := "The request was sent; its answer will follow."
		s.say(msg)
		s.result(msg, false, nil, start)
		return
	}
	out, ok := s.bash(ctx, p.GateURL)
	if ctx.Err() != nil {
		return
	}
	if ok && s.fault == FaultGateFailurePropagated {
		out, ok = "curl: (22) The requested URL returned error: 503", false
	}
	if s.fault == FaultMalformedLine {
		s.logf("fault %s: writing a line that is not JSON", s.fault)
		s.writeLine(MalformedLine)
	}
	s.say(out)
	s.result(out, !ok, nil, start)
}

// native plays the native scenario: the provider's own background Bash task.
func (s *session) native(ctx context.Context, p Plan, start time.Time) error {
	cmd := "curl --fail --silent " + p.GateURL
	toolID := s.toolUse("Bash", map[string]any{"command": cmd, "run_in_background": true, "description": "Fetch the gate in the background"})
	taskID := "b" + strings.ReplaceAll(newID(), "-", "")[:8]
	s.toolResult(toolID, "Command running in background with ID: "+taskID, false)
	s.emit(Message{Type: TypeSystem, Subtype: SubtypeTaskStarted, TaskID: taskID, ToolUseID: toolID, Description: cmd, TaskType: "local_bash"})
	if s.fault == FaultCrashMidTurn {
		s.logf("fault %s: exiting in the middle of the turn", s.fault)
		return ErrCrashed
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		d := bgDone{taskID: taskID, toolUseID: toolID, command: cmd}
		switch s.fault {
		case FaultEarlyChildResult:
			d.output, d.ok = "The request was sent; its answer will follow.", true
		default:
			out, err := curl(ctx, s.o.HTTPClient, p.GateURL)
			d.output, d.ok = out, err == nil
			if err != nil {
				d.output = err.Error()
			}
			if d.ok && s.fault == FaultGateFailurePropagated {
				d.output, d.ok = "curl: (22) The requested URL returned error: 503", false
			}
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case s.notes <- d:
		case <-ctx.Done():
		}
	}()
	s.say("PARENT_RELEASED")
	s.result("PARENT_RELEASED", false, nil, start)
	return nil
}

// autoTurn is what the CLI does when a background task ends: the
// task_notification, then a turn of its own that reads the output.
func (s *session) autoTurn(ctx context.Context, d bgDone) {
	start := time.Now()
	file := s.writeOutput(d.taskID, d.output)
	status, summary := "completed", fmt.Sprintf("Background command %q completed (exit code 0)", d.command)
	if !d.ok {
		status, summary = "failed", fmt.Sprintf("Background command %q failed with exit code 22", d.command)
	}
	s.emit(Message{Type: TypeSystem, Subtype: SubtypeTaskNotification, TaskID: d.taskID, ToolUseID: d.toolUseID, Status: status, OutputFile: file, Summary: summary})
	id := s.toolUse("Read", map[string]any{"file_path": file})
	s.toolResult(id, d.output, false)
	answer := d.output
	if s.ack {
		answer = "ACK:" + d.output
	}
	if ctx.Err() != nil {
		return
	}
	s.say(answer)
	s.result(answer, false, &Origin{Kind: "task-notification"}, start)
}

// writeOutput keeps a background task's output in a file, as the CLI does.
func (s *session) writeOutput(taskID, output string) string {
	if s.tmp == "" {
		dir, err := os.MkdirTemp(s.o.TempDir, "wireproof-provider-")
		if err != nil {
			s.logf("task output: %v", err)
			return ""
		}
		s.tmp = dir
	}
	path := filepath.Join(s.tmp, taskID+".output")
	if err := os.WriteFile(path, []byte(output), 0o600); err != nil {
		s.logf("task output: %v", err)
	}
	return path
}
