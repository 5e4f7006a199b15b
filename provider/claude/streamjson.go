package claude

import (
	"encoding/json"
	"strings"
)

// The Claude CLI's stream-json protocol: one JSON object per line on stdin
// (from the SDK) and stdout (to the SDK). Message is the union of every line
// either side sends; only the fields of its Type are set. Both the scripted
// provider and the fixture server's SDK side use these types.

// Line types.
const (
	TypeControlRequest  = "control_request"
	TypeControlResponse = "control_response"
	TypeUser            = "user"
	TypeAssistant       = "assistant"
	TypeSystem          = "system"
	TypeResult          = "result"
)

// System subtypes.
const (
	SubtypeInit             = "init"
	SubtypeTaskStarted      = "task_started"
	SubtypeTaskNotification = "task_notification"
)

// Message is one stream-json line.
type Message struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	UUID      string `json:"uuid,omitempty"`

	// control_request / control_response
	RequestID string           `json:"request_id,omitempty"`
	Request   *ControlRequest  `json:"request,omitempty"`
	Response  *ControlResponse `json:"response,omitempty"`

	// user / assistant
	Message         *Turn           `json:"message,omitempty"`
	ParentToolUseID json.RawMessage `json:"parent_tool_use_id,omitempty"` // null for a top-level turn

	// system init
	Cwd            string      `json:"cwd,omitempty"`
	Tools          []string    `json:"tools,omitempty"`
	MCPServers     []MCPStatus `json:"mcp_servers,omitempty"`
	Model          string      `json:"model,omitempty"`
	PermissionMode string      `json:"permissionMode,omitempty"`
	APIKeySource   string      `json:"apiKeySource,omitempty"`
	ClaudeVersion  string      `json:"claude_code_version,omitempty"`

	// system task_started / task_notification
	TaskID      string `json:"task_id,omitempty"`
	ToolUseID   string `json:"tool_use_id,omitempty"`
	Description string `json:"description,omitempty"`
	TaskType    string `json:"task_type,omitempty"`
	// IsBackgrounded is the real CLI's word on a task_started: false for a
	// foreground command it reports as a task because it runs long (a
	// command the turn waits for, not background work); absent from the
	// scripted provider's, whose tasks are all background ones.
	IsBackgrounded *bool  `json:"is_backgrounded,omitempty"`
	Status         string `json:"status,omitempty"`
	OutputFile     string `json:"output_file,omitempty"`
	Summary        string `json:"summary,omitempty"`

	// result
	IsError    *bool   `json:"is_error,omitempty"`
	NumTurns   int     `json:"num_turns,omitempty"`
	Result     *string `json:"result,omitempty"`
	DurationMS int64   `json:"duration_ms,omitempty"`
	Origin     *Origin `json:"origin,omitempty"`
}

// ControlRequest is the request of a control_request line.
type ControlRequest struct {
	Subtype string `json:"subtype"`
	// The rest of the request, kept as sent.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the whole request in Raw.
func (c *ControlRequest) UnmarshalJSON(b []byte) error {
	var s struct {
		Subtype string `json:"subtype"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	c.Subtype, c.Raw = s.Subtype, append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes Raw when it is set.
func (c ControlRequest) MarshalJSON() ([]byte, error) {
	if len(c.Raw) > 0 {
		return c.Raw, nil
	}
	return json.Marshal(struct {
		Subtype string `json:"subtype"`
	}{c.Subtype})
}

// ControlResponse answers a control_request.
type ControlResponse struct {
	Subtype   string          `json:"subtype"` // success or error
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// InitializeResponse is the answer to the initialize control request: what
// the server's health check reads (the account in particular).
type InitializeResponse struct {
	Commands              []json.RawMessage `json:"commands"`
	Agents                []json.RawMessage `json:"agents"`
	OutputStyle           string            `json:"output_style"`
	AvailableOutputStyles []string          `json:"available_output_styles"`
	Models                []ModelInfo       `json:"models"`
	Account               Account           `json:"account"`
}

// ModelInfo is one model the CLI offers.
type ModelInfo struct {
	Value       string `json:"value"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

// Account is who the CLI is logged in as.
type Account struct {
	Email            string `json:"email"`
	SubscriptionType string `json:"subscriptionType"`
	TokenSource      string `json:"tokenSource"`
	APIProvider      string `json:"apiProvider"`
}

// MCPStatus is one MCP server in system/init.
type MCPStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Origin says what started a turn; the automatic turn after a background
// task's notification has Kind "task-notification".
type Origin struct {
	Kind string `json:"kind"`
}

// Turn is the message of a user or assistant line.
type Turn struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
	ID      string  `json:"id,omitempty"`
	Model   string  `json:"model,omitempty"`
}

// Content is a message's content: a plain string or a list of blocks. A
// string decodes as one text block and Text reads either.
type Content []Block

// UnmarshalJSON accepts a string or an array of blocks.
func (c *Content) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var blocks []Block
	if err := json.Unmarshal(b, &blocks); err != nil {
		return err
	}
	*c = blocks
	return nil
}

// Text joins the text blocks.
func (c Content) Text() string {
	var out string
	for _, b := range c {
		if b.Type == "text" {
			if out != "" {
				out += "\n"
			}
			out += b.Text
		}
	}
	return out
}

// Block is one content block: text, tool_use or tool_result.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   ResultContent   `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ResultContent is a tool_result's content: written as a string; read from
// a string or, as the real CLI writes it, a list of blocks (text blocks, and
// tool_reference blocks naming the tools ToolSearch loaded), whose texts and
// tool names it joins with newlines.
type ResultContent string

// UnmarshalJSON accepts a string or an array of blocks.
func (c *ResultContent) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = ResultContent(s)
		return nil
	}
	var blocks []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ToolName string `json:"tool_name"`
	}
	if err := json.Unmarshal(b, &blocks); err != nil {
		return err
	}
	var parts []string
	for _, bl := range blocks {
		switch {
		case bl.Type == "text":
			parts = append(parts, bl.Text)
		case bl.ToolName != "":
			parts = append(parts, bl.ToolName)
		}
	}
	*c = ResultContent(strings.Join(parts, "\n"))
	return nil
}

// UserText builds the line the SDK sends for one user turn.
func UserText(text string) Message {
	return Message{Type: TypeUser, Message: &Turn{Role: "user", Content: Content{{Type: "text", Text: text}}}, ParentToolUseID: json.RawMessage("null")}
}

// ControlLine builds a control_request line.
func ControlLine(requestID, subtype string) Message {
	return Message{Type: TypeControlRequest, RequestID: requestID, Request: &ControlRequest{Subtype: subtype}}
}
