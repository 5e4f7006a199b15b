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
		{"message number", `{"model":"m","max_tokens":1,"messages":[1]}`, "messages: expected an array of message objects, got a number"},
		{"content number", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":7}]}`, "messages.content: expected a string or an array of content blocks, got a number"},
		{"block number", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[5]}]}`, "messages.content: expected an array of content block objects, got a number"},
		{"block type number", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":1}]}]}`, "messages.content.type: expected a string, got a number"},
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

// TestParseResponsesRequestBadBodies: the same for the Responses API.
func TestParseResponsesRequestBadBodies(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"array body", `[]`, "request body is not a JSON object"},
		{"truncated", `{"model":`, "request body is not valid JSON: unexpected end of JSON input"},
		{"model number", `{"model":2,"input":"hi"}`, "model: expected a string, got a number"},
		{"input number", `{"model":"m","input":5}`, "input: expected a string or an array of input items, got a number"},
		{"item number", `{"model":"m","input":[5]}`, "input: expected a string or an array of input items, got a number"},
		{"item content number", `{"model":"m","input":[{"role":"user","content":5}]}`, "input.content: expected a string or an array of content parts, got a number"},
		{"part number", `{"model":"m","input":[{"role":"user","content":[5]}]}`, "input.content: expected an array of content part objects, got a number"},
		{"part text number", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":5}]}]}`, "input.content.text: expected a string, got a number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, aerr := model.ParseResponsesRequest([]byte(c.body))
			if aerr == nil {
				t.Fatalf("ParseResponsesRequest(%s) = nil error", c.body)
			}
			if diff := cmp.Diff(c.want, aerr.Body.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}
