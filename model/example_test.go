package model_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/anthropic"
)

// ExampleRespond plays the turn a conversation asks for: here a delegated
// task's first turn, the gate fetched with Bash.
func ExampleRespond() {
	req := &anthropic.Request{Model: "claude-sonnet-4-6", MaxTokens: 1024,
		Tools: []anthropic.Tool{{Name: "Bash"}, {Name: "Read"}},
		Messages: []anthropic.Message{{Role: anthropic.RoleUser, Content: anthropic.Content{
			{Type: anthropic.BlockText, Text: "<system-reminder>\nToday is Tuesday.\n</system-reminder>"},
			{Type: anthropic.BlockText, Text: "Run curl --fail --silent http://127.0.0.1:4567/gate and return exactly the response as your final answer."},
		}}}}
	turn := model.Respond(req)
	fmt.Println(turn.Plan, turn.Step, turn.Tool, turn.Input["command"])
	// Output: child fetch Bash curl --fail --silent http://127.0.0.1:4567/gate
}

// ExampleStart serves the model on loopback; a real Claude CLI is pointed
// at URL with ANTHROPIC_BASE_URL.
func ExampleStart() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := model.Start(ctx, "127.0.0.1:0", nil)
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	body := `{"model":"claude-sonnet-4-6","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"Say hi"}]}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"/v1/messages?beta=true", strings.NewReader(body))
	req.Header.Set("x-api-key", "any")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	a := anthropic.NewAssembler()
	_ = anthropic.ReadEvents(resp.Body, func(name string, data []byte) error {
		fmt.Println(name)
		return a.Feed(name, data)
	})
	fmt.Println(a.Message().Content[0].Text)
	// Output:
	// message_start
	// ping
	// content_block_start
	// content_block_delta
	// content_block_delta
	// content_block_stop
	// message_delta
	// message_stop
	// I found no task to run in this message (6 characters).
}
