package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/model/anthropic"
)

// TestModelServes: `wireproof model` prints its URL, answers a real Claude
// CLI request with a stream, logs the plan and step, and ends cleanly when
// its context does (SIGINT/SIGTERM).
func TestModelServes(t *testing.T) {
	body, err := os.ReadFile("../../model/testdata/requests/idle-2-delegate.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done, stdout, stderr := serveModel(ctx, t, modelOptions{addr: "127.0.0.1:0"})
	if got := strings.TrimSpace(stdout.String()); got != url || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("stdout %q, want the URL %q", got, url)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true", bytes.NewReader(body))
	req.Header.Set("x-api-key", "k")
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	a := anthropic.NewAssembler()
	err = anthropic.ReadEvents(resp.Body, a.Feed)
	resp.Body.Close()
	if err != nil || !a.Complete() || len(a.Message().ToolUses()) != 1 || a.Message().ToolUses()[0].Name != "mcp__t3-code__delegate_task" {
		t.Fatalf("answer %+v, complete %v: %v", a.Message(), a.Complete(), err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("model ended with %v", err)
	}
	if !strings.Contains(stderr.String(), "wireproof model: idle/delegate (4 messages, 14 tools)") {
		t.Errorf("stderr %q does not log the turn", stderr.String())
	}
}

func TestModelBadFlags(t *testing.T) {
	code, _, stderr := runCLI(t, "model", "--fault", "nope")
	if code != exitUsage || !strings.Contains(stderr, `--fault: unknown model fault "nope"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	// An address it cannot listen on is a usage error, as for every verb
	// that serves; --addr, its older spelling, is the same flag.
	for _, flag := range []string{"--listen", "--addr"} {
		code, _, stderr = runCLI(t, "model", flag, "256.0.0.1:0")
		if code != exitUsage || !strings.Contains(stderr, "--listen 256.0.0.1:0: model: listen on 256.0.0.1:0") {
			t.Errorf("%s: exit %d, stderr %q", flag, code, stderr)
		}
	}
}
