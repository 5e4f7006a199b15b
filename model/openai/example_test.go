package openai_test

import (
	"fmt"
	"os"

	"github.com/wireproof/wireproof/model/openai"
)

// A response written as a stream, as the Codex CLI reads it.
func ExampleEvents() {
	resp := &openai.Response{ID: "resp_1", Object: "response", Status: openai.StatusCompleted, Output: []openai.Item{
		{Type: openai.ItemFunctionCall, ID: "fc_1", CallID: "call_1", Name: "exec_command", Arguments: `{"cmd":"echo hi"}`, Status: openai.StatusCompleted},
	}}
	sw := openai.NewStreamWriter(os.Stdout)
	for _, ev := range openai.Events(resp, &openai.StreamOptions{DeltaBytes: 64}) {
		if ev.Type == openai.EventCompleted {
			fmt.Println("event: " + ev.Type)
			continue
		}
		_ = sw.Write(ev)
	}
	// Output:
	// event: response.created
	// data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":0,"status":"in_progress","output":[]}}
	//
	// event: response.in_progress
	// data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response","created_at":0,"status":"in_progress","output":[]}}
	//
	// event: response.output_item.added
	// data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"type":"function_call","id":"fc_1","status":"in_progress","call_id":"call_1","name":"exec_command"}}
	//
	// event: response.function_call_arguments.delta
	// data: {"type":"response.function_call_arguments.delta","sequence_number":3,"output_index":0,"item_id":"fc_1","delta":"{\"cmd\":\"echo hi\"}"}
	//
	// event: response.function_call_arguments.done
	// data: {"type":"response.function_call_arguments.done","sequence_number":4,"output_index":0,"item_id":"fc_1","arguments":"{\"cmd\":\"echo hi\"}"}
	//
	// event: response.output_item.done
	// data: {"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"type":"function_call","id":"fc_1","status":"completed","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"echo hi\"}"}}
	//
	// event: response.completed
}
