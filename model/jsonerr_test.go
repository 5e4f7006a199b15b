package model_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/model"
)

// TestParseRequestBadBodies: a body that does not decode is answered in the
// API's terms (which field, what was expected, what was sent), never with
// encoding/json's Go type names.
func TestParseRequestBadBodies(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"array body", `[{"model":"m"}]`, "request body is not a JSON object"},
		{"string body", `"hi"`, "request body is not a JSON object"},
		{"truncated", `{`, "request body is not valid JSON: unexpected end of JSON input"},
		{"trailing", `{"model":"m"} x`, "request body is not valid JSON: invalid character 'x' after top-level value"},
		{"model number", `{"model":1,"max_tokens":1,"messages":[]}`, "model: expected a string, got a number"},
		{"max_tokens string", `{"model":"m","max_tokens":"8","messages":[]}`, "max_tokens: expected an integer, got a string"},
		{"messages object", `{"model":"m","max_tokens":1,"messages":{}}`, "messages: expected an array of message objects, got an object"},
		{"message number", `{"model":"m","max_tokens":1,"messages":[1]}`, "messages.0: expected a message object, got a number"},
		{"content number", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":7}]}`, "messages.0.content: expected a string or an array of content blocks, got a number"},
		{"block number", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[5]}]}`, "messages.0.content.0: expected a content block object, got a number"},
		{"block type number", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":1}]}]}`, "messages.0.content.0.type: expected a string, got a number"},
		{"second message's text", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"text","text":5}]}]}`, "messages.1.content.0.text: expected a string, got a number"},
		{"later block's text", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":[]}]}]}`, "messages.0.content.1.text: expected a string, got an array"},
		{"tool_result part array", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[[]]}]}]}`, "messages.0.content.0.content.0: expected a content block object, got an array"},
		{"tool_result part text", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"user","content":[{"type":"text","text":"b"},{"type":"tool_result","tool_use_id":"x","content":[{"type":"text","text":"c"},{"type":"text","text":false}]}]}]}`, "messages.1.content.1.content.1.text: expected a string, got a bool"},
		{"tool number", `{"model":"m","max_tokens":5,"tools":[5],"messages":[{"role":"user","content":"a"}]}`, "tools.0: expected a tool object, got a number"},
		{"second tool's name", `{"model":"m","max_tokens":5,"tools":[{"name":"a"},{"name":1}],"messages":[]}`, "tools.1.name: expected a string, got a number"},
		{"escaped key", `{"model":"m","max_tokens":5,"messages":[{"role":"user","\u0063ontent":[{"type":"text","text":1}]}]}`, "messages.0.content.0.text: expected a string, got a number"},
		{"max_tokens too large", `{"model":"m","max_tokens":1e400,"messages":[]}`, "max_tokens: expected an integer, got a number"},
		{"system bool", `{"model":"m","max_tokens":1,"system":true,"messages":[]}`, "system: expected a string or an array of content blocks, got a bool"},
		{"tools object", `{"model":"m","max_tokens":1,"tools":{},"messages":[]}`, "tools: expected an array of tool objects, got an object"},
		{"stream string", `{"model":"m","max_tokens":1,"stream":"yes","messages":[]}`, "stream: expected a boolean, got a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, aerr := model.ParseRequest([]byte(c.body), true)
			if aerr == nil {
				t.Fatalf("ParseRequest(%s) = nil error", c.body)
			}
			if diff := cmp.Diff(c.want, aerr.Body.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if aerr.Body.Type != "invalid_request_error" {
				t.Errorf("type %q", aerr.Body.Type)
			}
		})
	}
}

// TestParseResponsesRequestBadBodies: the same for the Responses API, in
// its words: a type error is invalid_type with param naming the field
// (input[1].content), as OpenAI's is.
func TestParseResponsesRequestBadBodies(t *testing.T) {
	type answer struct {
		Message     string
		Param, Code *string
	}
	param := func(p string) answer {
		return answer{Param: &p, Code: ptr("invalid_type")}
	}
	cases := []struct {
		name, body string
		want       answer
	}{
		{"array body", `[]`, answer{Message: "request body is not a JSON object"}},
		{"truncated", `{"model":`, answer{Message: "request body is not valid JSON: unexpected end of JSON input"}},
		{"model number", `{"model":2,"input":"hi"}`, param("model")},
		{"input number", `{"model":"m","input":5}`, param("input")},
		{"item number", `{"model":"m","input":[5]}`, param("input[0]")},
		{"item array", `{"model":"m","input":[[]]}`, param("input[0]")},
		{"item content number", `{"model":"m","input":[{"role":"user","content":5}]}`, param("input[0].content")},
		{"second item content", `{"model":"m","input":[{"role":"user","content":"a"},{"type":"message","role":"user","content":5}]}`, param("input[1].content")},
		{"part number", `{"model":"m","input":[{"role":"user","content":[5]}]}`, param("input[0].content[0]")},
		{"part text number", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":5}]}]}`, param("input[0].content[1].text")},
		{"output number", `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":7}]}`, param("input[0].output")},
		{"tool name", `{"model":"m","input":"hi","tools":[{"type":"function","name":"a"},{"type":"namespace","name":"n","tools":[{"type":"function","name":3}]}]}`, param("tools[1].tools[0].name")},
	}
	messages := map[string]string{
		"model number":        "Invalid type for 'model': expected a string, but got a number instead.",
		"input number":        "Invalid type for 'input': expected a string or an array of input items, but got a number instead.",
		"item number":         "Invalid type for 'input[0]': expected an input item object, but got a number instead.",
		"item array":          "Invalid type for 'input[0]': expected an input item object, but got an array instead.",
		"item content number": "Invalid type for 'input[0].content': expected a string or an array of content parts, but got a number instead.",
		"second item content": "Invalid type for 'input[1].content': expected a string or an array of content parts, but got a number instead.",
		"part number":         "Invalid type for 'input[0].content[0]': expected a content part object, but got a number instead.",
		"part text number":    "Invalid type for 'input[0].content[1].text': expected a string, but got a number instead.",
		"output number":       "Invalid type for 'input[0].output': expected a string or an array of content parts, but got a number instead.",
		"tool name":           "Invalid type for 'tools[1].tools[0].name': expected a string, but got a number instead.",
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if m, ok := messages[c.name]; ok {
				c.want.Message = m
			}
			_, aerr := model.ParseResponsesRequest([]byte(c.body))
			if aerr == nil {
				t.Fatalf("ParseResponsesRequest(%s) = nil error", c.body)
			}
			got := answer{Message: aerr.Body.Message, Param: aerr.Body.Param, Code: aerr.Body.Code}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr(s string) *string { return &s }
