package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/replay"
)

// codexApp is the "codex-app" helper: a stand-in for `codex app-server`
// speaking its JSON-RPC dialect (no "jsonrpc" member) on stdio: every
// request is answered with an empty result, turn/start's after a
// turn/started and before a turn/completed notification; it exits at EOF.
func codexApp() int {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		if req.Method == "turn/start" {
			fmt.Println(`{"id":` + string(req.ID) + `,"result":{"turn":{"id":"turn-1","status":"inProgress"}}}`)
			fmt.Println(`{"method":"turn/started","params":{"threadId":"t1","turn":{"id":"turn-1","status":"inProgress"}}}`)
			fmt.Println(`{"method":"turn/completed","params":{"threadId":"t1","turn":{"id":"turn-1","status":"completed"}}}`)
			continue
		}
		fmt.Println(`{"id":` + string(req.ID) + `,"result":{}}`)
	}
	return 0
}

// TestRecordStdioCodexAppServer: `record --stdio -- codex app-server`
// records the command's process (proc.start with its argv, proc.exit) on
// its stdio channel, so replay judges the channel in Codex's JSON-RPC
// dialect: the recording passes, its turn is a call, and the process's exit
// ends the channel.
func TestRecordStdioCodexAppServer(t *testing.T) {
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	codex := filepath.Join(dir, "codex")
	if err := os.Symlink(self, codex); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "codex.zst")
	cmd := exec.Command(wireproofBin, "record", "--stdio", "-o", out, "--", codex, "app-server")
	cmd.Env = testkit.HelperEnv("codex-app")
	cmd.Stdin = strings.NewReader(`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"t3code_desktop"}}}` + "\n" +
		`{"method":"initialized"}` + "\n" + `{"id":2,"method":"turn/start","params":{"threadId":"t1","input":[]}}` + "\n")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &bytes.Buffer{}, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wireproof record --stdio: %v\n%s", err, stderr.String())
	}
	_, evs := recordedEvents(t, out)
	var procs []string
	for _, ev := range evs {
		switch ev.Kind {
		case bundle.KindProcStart:
			procs = append(procs, fmt.Sprintf("%s %s %s", ev.Kind, ev.Conn, ev.Attrs))
		case bundle.KindProcExit:
			procs = append(procs, fmt.Sprintf("%s %s %d", ev.Kind, ev.Conn, ev.Code))
		}
	}
	argv, _ := json.Marshal([]string{codex, "app-server"})
	want := []string{`proc.start stdio {"argv":` + string(argv) + `}`, "proc.exit stdio 0"}
	if strings.Join(procs, "\n") != strings.Join(want, "\n") {
		t.Errorf("process events %q, want %q", procs, want)
	}
	res, err := replay.ReplayFile(context.Background(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict.Status != assert.StatusPassed {
		t.Errorf("a Codex app-server's recording fails: %+v", res.Verdict.Failure)
	}
	var calls bytes.Buffer
	if err := inspectCalls(context.Background(), out, &calls); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"initialize", "turn/start", "turn-1"} {
		if !strings.Contains(calls.String(), c) {
			t.Errorf("inspect --calls lacks %s:\n%s", c, calls.String())
		}
	}
}
