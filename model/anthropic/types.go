package anthropic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// Roles of a message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleSystem: the Claude CLI sends mid-conversation system turns
	// (environment, deferred tools) as messages of this role.
	RoleSystem = "system"
)

// Content block types.
const (
	BlockText          = "text"
	BlockToolUse       = "tool_use"
	BlockToolResult    = "tool_result"
	BlockThinking      = "thinking"
	BlockToolReference = "tool_reference" // a tool ToolSearch loaded, in its tool_result
)

// Request is the body of POST /v1/messages (and of count_tokens, which has
// no max_tokens nor stream). Fields wireproof does not read are not kept.
type Request struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens,omitempty"`
	System    Content   `json:"system,omitempty"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools,omitempty"`
	Stream    bool      `json:"stream,omitempty"`
}

// Message is one turn of the conversation.
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Tool is one tool the request offers.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Type        string          `json:"type,omitempty"` // server tools (web_search_...); "" for a client tool
}

// Content is a message's content: a list of blocks. On the wire it is a
// string (one text block) or an array of blocks.
type Content []Block

// UnmarshalJSON takes a string (one text block), null or an array of blocks.
func (c *Content) UnmarshalJSON(b []byte) error {
	blocks, err := jsonscan.StringOrArray(b, reflect.TypeFor[Content](), func(s string) []Block {
		return []Block{{Type: BlockText, Text: s}}
	})
	*c = blocks
	return err
}

// Text joins the text of the content's text blocks (newline-separated).
// One text block's text is returned as it is, not copied: a request's
// text can be megabytes, and the scripted model reads it several times.
func (c Content) Text() string {
	var b strings.Builder
	n, texts := 0, 0
	last := ""
	for _, bl := range c {
		if bl.Type == BlockText {
			n += len(bl.Text)
			texts++
			last = bl.Text
		}
	}
	if texts <= 1 {
		return last
	}
	b.Grow(n + texts - 1)
	for _, bl := range c {
		if bl.Type == BlockText {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// Block is one content block. Which fields mean something depends on Type.
type Block struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   Content `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
	// thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	// tool_reference
	ToolName string `json:"tool_name,omitempty"`
}

// MarshalJSON writes the fields of the block's type, with the ones the API
// always sends ("text" of a text block, "input" of a tool_use) even when
// empty.
func (b Block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case BlockText:
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{b.Type, b.Text})
	case BlockToolUse:
		in := b.Input
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		return json.Marshal(struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		}{b.Type, b.ID, b.Name, in})
	case BlockThinking:
		return json.Marshal(struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
		}{b.Type, b.Thinking, b.Signature})
	}
	type plain Block
	return json.Marshal(plain(b))
}

// StopReason is why the model stopped. It is null on the wire until the
// message is complete (message_start), so "" is written as null.
type StopReason string

// Stop reasons.
const (
	StopEndTurn      StopReason = "end_turn"
	StopToolUse      StopReason = "tool_use"
	StopMaxTokens    StopReason = "max_tokens"
	StopSequence     StopReason = "stop_sequence"
	StopPauseTurn    StopReason = "pause_turn"
	StopRefusal      StopReason = "refusal"
	StopContextLimit StopReason = "model_context_window_exceeded"
)

// MarshalJSON writes "" as null.
func (s StopReason) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// UnmarshalJSON reads null as "".
func (s *StopReason) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*s = ""
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = StopReason(v)
	return nil
}

// Response is the message the model answers with: the body of a
// non-streamed answer, and what a stream's events assemble into.
type Response struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"` // "message"
	Role         string     `json:"role"` // "assistant"
	Model        string     `json:"model"`
	Content      []Block    `json:"content"`
	StopReason   StopReason `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        Usage      `json:"usage"`
}

// ToolUses returns the response's tool_use blocks.
func (r *Response) ToolUses() []Block {
	var out []Block
	for _, b := range r.Content {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

// Usage counts tokens.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty"`
}

// TokenCount is the answer to POST /v1/messages/count_tokens.
type TokenCount struct {
	InputTokens int `json:"input_tokens"`
}
