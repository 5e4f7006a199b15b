package openai

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// Item types of a request's input and a response's output.
const (
	ItemMessage            = "message"
	ItemFunctionCall       = "function_call"
	ItemFunctionCallOutput = "function_call_output"
	ItemReasoning          = "reasoning"
)

// Roles of a message item.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
	// RoleDeveloper: Codex sends its instructions, skills and permissions
	// as developer messages.
	RoleDeveloper = "developer"
)

// Content part types.
const (
	PartInputText  = "input_text"
	PartOutputText = "output_text"
)

// Tool types.
const (
	ToolFunction = "function"
	// ToolNamespace groups tools under a name: Codex 0.169.0 offers an MCP
	// server's tools as the namespace mcp__<server> (its name's "-" as
	// "_"), and a call of one names the namespace beside the tool.
	ToolNamespace = "namespace"
)

// Request is the body of POST /v1/responses. Fields wireproof does not
// read are not kept.
type Request struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions,omitempty"`
	Input        Input  `json:"input"`
	Tools        []Tool `json:"tools,omitempty"`
	Stream       bool   `json:"stream,omitempty"`
}

// Input is a request's input: a list of items. On the wire it is a string
// (one user message) or an array of items.
type Input []Item

// UnmarshalJSON takes a string (one user message), null or an array of items.
func (in *Input) UnmarshalJSON(b []byte) error {
	items, err := jsonscan.StringOrArray(b, reflect.TypeFor[Input](), func(s string) []Item {
		return []Item{{Type: ItemMessage, Role: RoleUser, Content: Content{{Type: PartInputText, Text: s}}}}
	})
	*in = items
	return err
}

// Item is one input or output item: a message, a function call, a
// function call's output, reasoning.
type Item struct {
	Type   string `json:"type"`
	ID     string `json:"id,omitempty"`
	Status string `json:"status,omitempty"`
	// message
	Role    string  `json:"role,omitempty"`
	Content Content `json:"content,omitzero"`
	// function_call (Namespace: the tool's namespace, for an MCP tool)
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// function_call_output
	Output Output `json:"output,omitzero"`
}

// Content is a message's content parts. On the wire it is a string or an
// array of parts.
type Content []Part

// UnmarshalJSON takes a string (one input_text part), null or an array of parts.
func (c *Content) UnmarshalJSON(b []byte) error {
	parts, err := jsonscan.StringOrArray(b, reflect.TypeFor[Content](), func(s string) []Part {
		return []Part{{Type: PartInputText, Text: s}}
	})
	*c = parts
	return err
}

// Text joins the text of the content's parts (newline-separated).
func (c Content) Text() string {
	var parts []string
	for _, p := range c {
		if p.Text != "" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Part is one content part (input_text, output_text, ...).
type Part struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Annotations []json.RawMessage `json:"annotations,omitempty"`
}

// Output is a function call's output: a string (Codex's exec_command) or
// an array of content parts (Codex's MCP tool results).
type Output struct {
	Text  string
	Parts Content
}

// IsZero reports an absent output.
func (o Output) IsZero() bool { return o.Text == "" && o.Parts == nil }

// String is the output's text: the string, or the parts' texts joined.
func (o Output) String() string {
	if o.Parts != nil {
		return o.Parts.Text()
	}
	return o.Text
}

// UnmarshalJSON takes a string, null or an array of parts.
func (o *Output) UnmarshalJSON(b []byte) error {
	*o = Output{}
	parts, err := jsonscan.StringOrArray(b, reflect.TypeFor[Output](), func(s string) []Part {
		o.Text = s
		return nil
	})
	o.Parts = parts
	return err
}

// MarshalJSON writes the string, or the parts.
func (o Output) MarshalJSON() ([]byte, error) {
	if o.Parts != nil {
		return json.Marshal([]Part(o.Parts))
	}
	return json.Marshal(o.Text)
}

// Tool is one tool the request offers: a function, a namespace of
// functions (Tools), or a hosted tool (web_search, ...).
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Tools       []Tool          `json:"tools,omitempty"`
}

// Functions lists the request's callable tools as (namespace, name)
// pairs: the functions, and each namespace's functions with their
// namespace.
func (r *Request) Functions() [][2]string {
	var out [][2]string
	for _, t := range r.Tools {
		switch t.Type {
		case ToolFunction:
			out = append(out, [2]string{"", t.Name})
		case ToolNamespace:
			for _, f := range t.Tools {
				if f.Type == ToolFunction || f.Type == "" {
					out = append(out, [2]string{t.Name, f.Name})
				}
			}
		}
	}
	return out
}

// Offers reports whether the request offers function name (in namespace
// ns, "" for a top-level function).
func (r *Request) Offers(ns, name string) bool {
	for _, f := range r.Functions() {
		if f[0] == ns && f[1] == name {
			return true
		}
	}
	return false
}

// Response statuses.
const (
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	StatusIncomplete = "incomplete"
)

// Response is a response object (the JSON answer, and the response of the
// stream's response.created and response.completed events).
type Response struct {
	ID        string     `json:"id"`
	Object    string     `json:"object"`
	CreatedAt int64      `json:"created_at"`
	Status    string     `json:"status"`
	Model     string     `json:"model,omitempty"`
	Output    []Item     `json:"output"`
	Usage     *Usage     `json:"usage,omitempty"`
	Error     *ErrorBody `json:"error,omitempty"`
}

// Usage is a response's token usage.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}
