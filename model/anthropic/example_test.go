package anthropic_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/wireproof/wireproof/model/anthropic"
)

// ExampleEvents streams a message that calls a tool, as the API does.
func ExampleEvents() {
	msg := &anthropic.Response{ID: "msg_1", Type: "message", Role: "assistant", Model: "m",
		Content:    []anthropic.Block{{Type: "tool_use", ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
		StopReason: anthropic.StopToolUse, Usage: anthropic.Usage{InputTokens: 10, OutputTokens: 5}}
	w := anthropic.NewStreamWriter(os.Stdout)
	for _, ev := range anthropic.Events(msg, &anthropic.StreamOptions{NoPing: true}) {
		_ = w.Write(ev)
	}
	// Output:
	// event: message_start
	// data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}
	//
	// event: content_block_start
	// data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}
	//
	// event: content_block_delta
	// data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}
	//
	// event: content_block_delta
	// data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls\"}"}}
	//
	// event: content_block_stop
	// data: {"type":"content_block_stop","index":0}
	//
	// event: message_delta
	// data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":10,"output_tokens":5}}
	//
	// event: message_stop
	// data: {"type":"message_stop"}
}

// ExampleAssembler reads a stream back, naming the event that breaks the
// grammar.
func ExampleAssembler() {
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
	a := anthropic.NewAssembler()
	_ = anthropic.ReadEvents(strings.NewReader(stream), func(name string, data []byte) error {
		if err := a.Feed(name, data); err != nil {
			fmt.Println(err)
		}
		return nil
	})
	fmt.Println("complete:", a.Complete())
	// Output:
	// content_block_delta: a delta for block 0, which is not open
	// complete: false
}
