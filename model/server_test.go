package model_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/anthropic"
)

func startModel(t *testing.T, fault string) *model.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := model.Start(ctx, "", &model.Options{Fault: fault})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

var client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: 5 * time.Minute}

func post(t *testing.T, url string, body []byte, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", "test-key")
	req.Header.Set("anthropic-version", "2023-06-01")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func requestBody(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "requests", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assemble reads a streamed answer back into one message, failing on any
// break of the event grammar.
func assemble(t *testing.T, body io.Reader) *anthropic.Response {
	t.Helper()
	a := anthropic.NewAssembler()
	if err := anthropic.ReadEvents(body, a.Feed); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if !a.Complete() {
		t.Fatal("the stream ended before message_stop")
	}
	return a.Message()
}

// TestServeStreamed: each real request is answered with the SSE grammar,
// and the stream assembles into the message the brain meant.
func TestServeStreamed(t *testing.T) {
	s := startModel(t, "")
	for _, name := range []string{"idle-2-delegate", "idle-3-release", "native-1-background", "native-4-ack"} {
		t.Run(name, func(t *testing.T) {
			body := requestBody(t, name)
			resp := post(t, s.URL()+"/v1/messages?beta=true", body, nil)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
				t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Golden(t, filepath.Join("testdata", "sse", name+".sse"), raw)
			got := assemble(t, bytes.NewReader(raw))
			req := readRequest(t, name)
			want := model.Message(req, model.Respond(req), body)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("assembled message (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServeNotStreamed: stream false answers the message as JSON.
func TestServeNotStreamed(t *testing.T) {
	s := startModel(t, "")
	body := requestBody(t, "child-2-answer")
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	doc["stream"] = false
	body, _ = json.Marshal(doc)
	resp := post(t, s.URL()+"/v1/messages", body, nil)
	var got anthropic.Response
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	want := turn{Plan: "", Text: "SECRET-42"}
	if len(got.Content) != 1 || got.Content[0].Text != want.Text || got.StopReason != anthropic.StopEndTurn || got.Type != "message" || got.Role != "assistant" {
		t.Errorf("answer %+v, want one text block %q ending the turn", got, want.Text)
	}
}

func TestServeCountTokens(t *testing.T) {
	s := startModel(t, "")
	body := requestBody(t, "idle-1-load-tools")
	resp := post(t, s.URL()+"/v1/messages/count_tokens?beta=true", body, nil)
	var got anthropic.TokenCount
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	if got.InputTokens != len(body)/4+1 {
		t.Errorf("input_tokens %d, want %d", got.InputTokens, len(body)/4+1)
	}
}

// TestServeErrors: bad requests get the API's error shape and status.
func TestServeErrors(t *testing.T) {
	s := startModel(t, "")
	ok := requestBody(t, "idle-1-load-tools")
	cases := []struct {
		name, method, path string
		body               []byte
		header             map[string]string
		status             int
		want               anthropic.ErrorResponse
	}{
		{"not JSON", "POST", "/v1/messages", []byte("{"), nil, 400, errResp(anthropic.ErrInvalidRequest, "request body is not valid JSON: unexpected end of JSON input")},
		{"no model", "POST", "/v1/messages", []byte(`{"max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`), nil, 400, errResp(anthropic.ErrInvalidRequest, "model: Field required")},
		{"no messages", "POST", "/v1/messages", []byte(`{"model":"m","max_tokens":1,"messages":[]}`), nil, 400, errResp(anthropic.ErrInvalidRequest, "messages: at least one message is required")},
		{"no max_tokens", "POST", "/v1/messages", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), nil, 400, errResp(anthropic.ErrInvalidRequest, "max_tokens: Field required (a positive integer)")},
		{"bad role", "POST", "/v1/messages", []byte(`{"model":"m","max_tokens":1,"messages":[{"role":"robot","content":"hi"}]}`), nil, 400, errResp(anthropic.ErrInvalidRequest, `messages.0.role: Input should be 'user' or 'assistant', not "robot"`)},
		{"bad content", "POST", "/v1/messages", []byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":7}]}`), nil, 400, errResp(anthropic.ErrInvalidRequest, "messages.0.content: expected a string or an array of content blocks, got a number")},
		{"no key", "POST", "/v1/messages", ok, map[string]string{"x-api-key": ""}, 401, errResp(anthropic.ErrAuthentication, "x-api-key header is required")},
		{"unknown path", "POST", "/v1/complete", ok, nil, 404, errResp(anthropic.ErrNotFound, "Not found: POST /v1/complete")},
		{"GET", "GET", "/v1/messages", nil, nil, 405, errResp(anthropic.ErrInvalidRequest, "Method GET is not allowed on /v1/messages; use POST")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, s.URL()+c.path, bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("x-api-key", "k")
			for k, v := range c.header {
				req.Header.Del(k)
				if v != "" {
					req.Header.Set(k, v)
				}
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got anthropic.ErrorResponse
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, resp.Header.Get("Content-Type"), c.status)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func errResp(typ, msg string) anthropic.ErrorResponse {
	return anthropic.ErrorResponse{Type: "error", Error: anthropic.ErrorBody{Type: typ, Message: msg}}
}

// TestFaults: each fault strikes the first turn of a root instruction,
// once, and leaves other turns, and the retry, alone.
func TestFaults(t *testing.T) {
	first, later := requestBody(t, "idle-1-load-tools"), requestBody(t, "idle-2-delegate")
	t.Run(model.FaultMalformedEvent, func(t *testing.T) {
		s := startModel(t, model.FaultMalformedEvent)
		a := anthropic.NewAssembler()
		var problems []string
		err := anthropic.ReadEvents(post(t, s.URL()+"/v1/messages", first, nil).Body, func(name string, data []byte) error {
			if err := a.Feed(name, data); err != nil {
				var se *anthropic.StreamError
				if !errors.As(err, &se) {
					t.Fatalf("%T", err)
				}
				problems = append(problems, se.Kind+" "+se.Event)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"malformed content_block_delta"}, problems); diff != "" {
			t.Errorf("problems (-want +got):\n%s", diff)
		}
		assemble(t, post(t, s.URL()+"/v1/messages", later, nil).Body)
	})
	t.Run(model.FaultStreamCut, func(t *testing.T) {
		s := startModel(t, model.FaultStreamCut)
		a := anthropic.NewAssembler()
		err := anthropic.ReadEvents(post(t, s.URL()+"/v1/messages", first, nil).Body, a.Feed)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("reading the cut stream: %v, want an unexpected EOF", err)
		}
		if a.Complete() || a.Message() == nil || a.Events() < 3 {
			t.Errorf("complete %v after %d events, want a message started and not stopped", a.Complete(), a.Events())
		}
		assemble(t, post(t, s.URL()+"/v1/messages", later, nil).Body)
	})
	t.Run(model.FaultOverloaded, func(t *testing.T) {
		s := startModel(t, model.FaultOverloaded)
		resp := post(t, s.URL()+"/v1/messages", first, nil)
		var got anthropic.ErrorResponse
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 529 || got != errResp(anthropic.ErrOverloaded, "Overloaded") {
			t.Errorf("status %d, %+v", resp.StatusCode, got)
		}
		assemble(t, post(t, s.URL()+"/v1/messages", later, nil).Body)
	})
	t.Run(model.FaultUnknownTool, func(t *testing.T) {
		s := startModel(t, model.FaultUnknownTool)
		got := assemble(t, post(t, s.URL()+"/v1/messages", first, nil).Body)
		if uses := got.ToolUses(); len(uses) != 1 || uses[0].Name != model.UnknownTool || got.StopReason != anthropic.StopToolUse {
			t.Errorf("answer %+v, want a tool_use of %s", got, model.UnknownTool)
		}
		if uses := assemble(t, post(t, s.URL()+"/v1/messages", later, nil).Body).ToolUses(); len(uses) != 1 || uses[0].Name != "mcp__t3-code__delegate_task" {
			t.Errorf("the next turn calls %+v, want delegate_task", uses)
		}
	})
	// The fault strikes once: the CLI's retry of the first turn gets a good
	// answer, so the run goes on after the fault.
	for _, fault := range model.Faults {
		t.Run(fault+" retried", func(t *testing.T) {
			s := startModel(t, fault)
			resp := post(t, s.URL()+"/v1/messages", first, nil)
			_, _ = io.Copy(io.Discard, resp.Body)
			got := assemble(t, post(t, s.URL()+"/v1/messages", first, nil).Body)
			if uses := got.ToolUses(); len(uses) != 1 || uses[0].Name != "ToolSearch" {
				t.Errorf("the retry is answered %+v, want the plan's ToolSearch", got)
			}
		})
	}
	if _, err := model.NewHandler(&model.Options{Fault: "nope"}); err == nil {
		t.Error("an unknown fault was accepted")
	}
}
