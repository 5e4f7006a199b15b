package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/model/openai"
	"github.com/wireproof/wireproof/record"
)

// deltaLeakSecret is longer than one delta of either API (32 runes, 24
// bytes), as the scenarios' answers are, so every stream below carries it in
// two or more pieces.
const deltaLeakSecret = "sk-ant-api03-Zq7xW2pLm9vR4tYb8nC6dF1gH5jK3sA0eUoIiPyT"

// TestRedactSecretSplitAcrossDeltas records a real loopback server that
// streams the secret across deltas (the Messages API's text_delta and
// input_json_delta, the Responses API's output_text and arguments deltas,
// encoded by model/anthropic and model/openai as the scripted model writes
// them) through the real proxy, and the same text as stdio lines (Codex's
// item/agentMessage/delta, the Claude CLI's stream_event): no output of the
// bundle (the decompressed bundle, payloads joined per connection, inspect
// plain, --full, --json and --calls, the HAR export, the report, replay)
// holds the secret, a piece of it, or two adjacent pieces joined; the
// client got the wire bytes unchanged.
func TestRedactSecretSplitAcrossDeltas(t *testing.T) {
	text := "ACK:" + deltaLeakSecret
	input := json.RawMessage(`{"command":"echo ` + deltaLeakSecret + `"}`)
	anthropicEvents := anthropic.Events(&anthropic.Response{ID: "msg_1", Type: "message", Role: "assistant", Model: "m",
		Content:    []anthropic.Block{{Type: anthropic.BlockText, Text: text}, {Type: anthropic.BlockToolUse, ID: "toolu_1", Name: "Bash", Input: input}},
		StopReason: "tool_use"}, nil)
	openaiEvents := openai.Events(&openai.Response{ID: "resp_1", Object: "response", Status: "completed",
		Output: []openai.Item{{Type: openai.ItemMessage, ID: "msg_1", Role: openai.RoleAssistant, Content: openai.Content{{Type: openai.PartOutputText, Text: deltaLeakSecret}}},
			{Type: openai.ItemFunctionCall, ID: "fc_1", CallID: "call_1", Name: "shell", Arguments: string(input)}}}, nil)

	// The pieces the secret was sent in, to look for them and their joins.
	var pieces [][]string
	var anthropicText, anthropicInput []string
	for _, ev := range anthropicEvents {
		if ev.Type == anthropic.EventContentBlockDelta {
			if *ev.Index == 0 {
				anthropicText = append(anthropicText, ev.Delta.Text)
			} else {
				anthropicInput = append(anthropicInput, ev.Delta.PartialJSON)
			}
		}
	}
	var openaiText, openaiArgs []string
	for _, ev := range openaiEvents {
		switch ev.Type {
		case openai.EventOutputTextDelta:
			openaiText = append(openaiText, ev.Delta)
		case openai.EventArgumentsDelta:
			openaiArgs = append(openaiArgs, ev.Delta)
		}
	}
	pieces = append(pieces, anthropicText, anthropicInput, openaiText, openaiArgs)
	for _, p := range pieces {
		if n := strings.Count(strings.Join(p, "\x00"), "\x00"); n < 1 || !strings.Contains(strings.Join(p, ""), deltaLeakSecret) {
			t.Fatalf("the secret is not split across deltas: %q", p)
		}
	}

	var sent [2]bytes.Buffer // what the upstream wrote, per API
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		switch r.URL.Path {
		case "/v1/messages":
			sw := anthropic.NewStreamWriter(io.MultiWriter(w, &sent[0]))
			for _, ev := range anthropicEvents {
				sw.Write(ev)
				w.(http.Flusher).Flush()
			}
		case "/v1/responses":
			sw := anthropic.NewStreamWriter(io.MultiWriter(w, &sent[1]))
			for _, ev := range openaiEvents {
				b, _ := json.Marshal(ev)
				sw.WriteRaw(ev.Type, b)
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer up.Close()

	path := filepath.Join(t.TempDir(), "deltas.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.New(w, &record.Options{Redact: []string{deltaLeakSecret}})
	u, _ := url.Parse(up.URL)
	p, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: u})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := record.Listen(context.Background(), "", p)
	if err != nil {
		t.Fatal(err)
	}
	for i, api := range []string{"/v1/messages", "/v1/responses"} {
		res, err := http.Post(srv.URL+api, "application/json", strings.NewReader(`{"stream":true}`))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, sent[i].Bytes()) {
			t.Errorf("%s: the client got %d bytes, not the %d the upstream sent", api, len(got), sent[i].Len())
		}
	}

	// The same text over stdio: Codex's app-server notifications and the
	// Claude CLI's stream_event lines.
	var codexLines, claudeLines strings.Builder
	var codexPieces []string
	for i := 0; i < len(text); i += 10 {
		d := text[i:min(i+10, len(text))]
		codexPieces = append(codexPieces, d)
		b, _ := json.Marshal(map[string]any{"method": "item/agentMessage/delta", "params": map[string]any{"threadId": "th_1", "turnId": "tu_1", "itemId": "msg_1", "delta": d}})
		codexLines.Write(append(b, '\n'))
	}
	codexLines.WriteString(`{"method":"item/completed","params":{"item":{"id":"msg_1","type":"agentMessage","text":"` + text + `"}}}` + "\n")
	for _, ev := range anthropicEvents {
		b, _ := json.Marshal(map[string]any{"type": "stream_event", "event": ev, "parent_tool_use_id": nil, "session_id": "s_1"})
		claudeLines.Write(append(b, '\n'))
	}
	pieces = append(pieces, codexPieces)
	for name, lines := range map[string]string{"codex": codexLines.String(), "claude": claudeLines.String()} {
		var relayed bytes.Buffer
		if _, err := io.Copy(&relayed, record.TapReader(rec, name, bundle.DirServerToClient, strings.NewReader(lines))); err != nil {
			t.Fatal(err)
		}
		if relayed.String() != lines {
			t.Errorf("%s: the tap changed the lines it relayed", name)
		}
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Error(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	// Every piece's share of the secret, and every two adjacent pieces
	// joined.
	var extra []string
	for _, ps := range pieces {
		for i, piece := range ps {
			extra = append(extra, secretShares(piece, deltaLeakSecret)...)
			if i+1 < len(ps) {
				extra = append(extra, ps[i]+ps[i+1])
			}
		}
	}
	checkNoLeakOf(t, path, deltaLeakSecret, deltaLeakSecret[20:34], extra)

	// What the decoders fold: the model calls' answers read back.
	code, stdout, stderr := runBin(t, "inspect", "--calls", path)
	if code != exitOK {
		t.Fatalf("inspect --calls: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "[REDACTED]") {
		t.Errorf("inspect --calls shows no redacted answer:\n%s", stdout)
	}
}

// secretShares returns what piece holds of secret, 6 bytes or more: its
// tail that begins secret, its head that ends it, or itself inside it.
func secretShares(piece, secret string) []string {
	var out []string
	for k := len(piece); k >= 6; k-- {
		if strings.HasPrefix(secret, piece[len(piece)-k:]) {
			out = append(out, piece[len(piece)-k:])
			break
		}
	}
	for k := len(piece); k >= 6; k-- {
		if strings.HasSuffix(secret, piece[:k]) {
			out = append(out, piece[:k])
			break
		}
	}
	if len(piece) >= 6 && strings.Contains(secret, piece) {
		out = append(out, piece)
	}
	return out
}
