package replay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// TestRealCodexAppServer records the real Codex CLI's app-server as verify
// records a provider (proc.start with its argv, its stdio lines through the
// record package's taps, proc.exit) and its model calls through the
// recording proxy in front of the scripted Responses API, driven as T3's
// CodexAdapterV2 drives it (initialize, initialized, thread/start,
// turn/start with approvalPolicy untrusted, the command approval Codex
// asks for accepted), then replays the bundle: the protocol-conformance
// suite passes on every side of the real traffic (the app-server's dialect,
// the Responses API), nothing is undecodable, and the calls are the
// server's requests, Codex's approval request, the turn and its items, and
// the two model calls.
func TestRealCodexAppServer(t *testing.T) {
	bin := testkit.CodexCLI(t, "..")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const secret = "wp-codex-gate-7319"
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, secret) }))
	defer gate.Close()
	m, err := model.Start(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	path := filepath.Join(t.TempDir(), "codex.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.New(w, nil)
	up, _ := url.Parse(m.URL())
	proxy, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: up})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := record.Listen(ctx, "127.0.0.1:0", proxy)
	if err != nil {
		t.Fatal(err)
	}

	home, work := t.TempDir(), t.TempDir()
	cfg := fmt.Sprintf("model = \"gpt-5-codex\"\nmodel_provider = \"wp\"\n[model_providers.wp]\nname = \"wp\"\nbase_url = %q\nwire_api = \"responses\"\nenv_key = \"WP_KEY\"\n", ps.URL+"/v1")
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	argv := []string{bin, "app-server"}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "HOME="+home, "WP_KEY=test-key")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	attrs, _ := json.Marshal(map[string]any{"argv": argv})
	if _, err := rec.Emit(&bundle.Event{Kind: bundle.KindProcStart, Conn: "provider-1", Attrs: attrs}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// Each line is recorded before it is passed on, as provider/cliwrap
	// does, so that whatever answers it is recorded after it.
	inTap := record.TapWriter(rec, "provider-1", bundle.DirClientToServer, io.Discard)
	outTap := record.TapWriter(rec, "provider-1", bundle.DirServerToClient, io.Discard)
	lines := make(chan map[string]json.RawMessage, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			_, _ = outTap.Write(append(sc.Bytes(), '\n'))
			var msg map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &msg) == nil {
				lines <- msg
			}
		}
	}()
	send := func(v any) {
		b, _ := json.Marshal(v)
		b = append(b, '\n')
		_, _ = inTap.Write(b)
		if _, err := stdin.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	approvals := 0
	// await reads Codex's lines until one satisfies ok, answering its
	// approval requests (accept) on the way.
	await := func(what string, ok func(map[string]json.RawMessage) bool) map[string]json.RawMessage {
		t.Helper()
		for {
			select {
			case msg, open := <-lines:
				if !open {
					t.Fatalf("the app-server's stdout ended waiting for %s", what)
				}
				if msg["method"] != nil && msg["id"] != nil {
					approvals++
					send(map[string]any{"id": msg["id"], "result": map[string]any{"decision": "accept"}})
				}
				if ok(msg) {
					return msg
				}
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			}
		}
	}
	answer := func(id string) func(map[string]json.RawMessage) bool {
		return func(msg map[string]json.RawMessage) bool { return string(msg["id"]) == id && msg["method"] == nil }
	}
	send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"clientInfo": map[string]any{"name": "t3code_desktop", "title": "T3 Code Desktop", "version": "0.1.0"}, "capabilities": map[string]any{"experimentalApi": true}}})
	await("initialize's answer", answer("1"))
	send(map[string]any{"method": "initialized"})
	send(map[string]any{"id": 2, "method": "thread/start", "params": map[string]any{"cwd": work, "model": "gpt-5-codex"}})
	started := await("thread/start's answer", answer("2"))
	var thread struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(started["result"], &thread); err != nil || thread.Thread.ID == "" {
		t.Fatalf("thread/start answered %s", started["result"])
	}
	task := "Run curl --fail --silent " + gate.URL + "/gate with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. Do not read other files. Do not retry failures."
	send(map[string]any{"id": 3, "method": "turn/start", "params": map[string]any{"threadId": thread.Thread.ID,
		"input": []any{map[string]any{"type": "text", "text": task, "text_elements": []any{}}}, "approvalPolicy": "untrusted", "sandboxPolicy": map[string]any{"type": "dangerFullAccess"}}})
	completed := await("turn/completed", func(msg map[string]json.RawMessage) bool { return string(msg["method"]) == `"turn/completed"` })
	if !strings.Contains(string(completed["params"]), `"status":"completed"`) {
		t.Errorf("turn/completed: %s", completed["params"])
	}
	stdin.Close() // the app-server exits at the end of its stdin
	for range lines {
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("the app-server: %v", err)
		}
		code = ee.ExitCode()
	}
	inTap.Close()
	outTap.Close()
	if _, err := rec.Emit(&bundle.Event{Kind: bundle.KindProcExit, Conn: "provider-1", Code: code}); err != nil {
		t.Fatal(err)
	}
	if err := ps.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if raw := testkit.Decompress(t, path); strings.Contains(string(raw), "test-key") {
		t.Error("the model API key reached the bundle")
	}
	if approvals != 1 {
		t.Errorf("Codex asked %d approvals, want 1 (the curl command)", approvals)
	}

	var calls []string
	res, err := replay.ReplayFile(ctx, path, &replay.Options{Engine: &replay.EngineOptions{Tap: &replay.Tap{Protocol: func(pe *protocol.Event) {
		if (pe.Kind == protocol.KindResponse || pe.Kind == protocol.KindEnd) && pe.Call != nil && pe.Protocol != protocol.HTTP {
			calls = append(calls, fmt.Sprintf("%s %s %s %s", pe.Protocol, pe.Kind, pe.Call.Method, pe.Call.Outcome))
			if pe.Err != nil {
				t.Logf("%s %s at %d: %v", pe.Protocol, pe.Kind, pe.Seq, pe.Err)
			}
		}
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict.Status != assert.StatusPassed {
		t.Errorf("the real Codex traffic fails conformance: %+v", res.Verdict.Failure)
	}
	if n := res.DecodeErrorCount; n != 0 {
		t.Errorf("%d undecodable messages: %+v", n, res.DecodeErrors)
	}
	// Each side in its own order: the app-server's stdio, and the model
	// calls. Between the two there is no order to hold: Codex completes its
	// agentMessage item from response.completed, which can be recorded
	// before or after the proxy sees the HTTP response end (Codex may close
	// the connection first).
	var stdio, model []string
	for _, c := range calls {
		if strings.HasPrefix(c, string(protocol.OpenAI)+" ") {
			model = append(model, c)
		} else {
			stdio = append(stdio, c)
		}
	}
	wantStdio := []string{
		"jsonrpc response initialize success",
		"jsonrpc response thread/start success",
		"jsonrpc response turn/start success",
		"codex response item userMessage success",
		"jsonrpc response item/commandExecution/requestApproval success",
		"codex response item commandExecution success",
		"codex response item agentMessage success",
		"codex response turn success",
	}
	if d := cmp.Diff(wantStdio, stdio); d != "" {
		t.Errorf("app-server calls (-want +got):\n%s", d)
	}
	wantModel := []string{
		"openai response responses success", // the answer that calls exec_command
		"openai response responses success", // the answer: the gate's secret
	}
	if d := cmp.Diff(wantModel, model); d != "" {
		t.Errorf("model calls (-want +got):\n%s", d)
	}
}

// TestRecordedCodexVerifyRuns replays real runs of verify --provider codex
// --provider-cli with Codex 0.169.0: under the fixture server (idle,
// passed) and under a real T3 0.0.33 server (idle: T3 never delivered the
// child's completion as a typed notification, typed-notification fails;
// T3 probes one app-server with initialize, account/read, skills/list and
// model/list, runs parent and child threads on a second, and closes its
// stdin when stopped; nested: see below). Each recorded verdict is reproduced, the
// conformance suite passes, and the app-servers' stdio was decoded in the
// Codex dialect with nothing invalid.
func TestRecordedCodexVerifyRuns(t *testing.T) {
	for _, c := range []struct {
		path   string
		status assert.Status
	}{
		{"../protocol/testdata/codex-verify-idle.zst", assert.StatusPassed},
		{"../protocol/testdata/codex-t3-idle.zst", assert.StatusFailed},
		// Nested under T3: T3 sends a turn/start after the driver's SIGTERM
		// and closes the app-server's stdin; Codex exits with status 0
		// without answering it, before the done mark. The stop's doing, not
		// jsonrpc-answered's.
		{"../protocol/testdata/codex-t3-nested.zst", assert.StatusFailed},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			dialect := map[string]int{}
			res, err := replay.ReplayFile(context.Background(), c.path, &replay.Options{Engine: delivery.EngineOptions(&replay.EngineOptions{
				OnEvent: func(pe *protocol.Event) {
					if pe.Protocol == protocol.JSONRPC && strings.HasPrefix(pe.Conn, "provider-") {
						dialect[pe.Conn+" "+string(pe.Dialect)]++
						if len(pe.Invalid) > 0 {
							t.Errorf("@%d %s: %v", pe.Seq, pe.Conn, pe.Invalid)
						}
					}
				}})})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Reproduced || res.Verdict.Status != c.status || res.DecodeErrorCount != 0 {
				t.Errorf("reproduced %v, status %s, %d decode errors: %s", res.Reproduced, res.Verdict.Status, res.DecodeErrorCount, res.Diff)
			}
			if conf := conformanceOf(t, res.Verdict); conf.Failure != nil {
				t.Errorf("conformance failed on real Codex traffic: %+v", conf.Failure)
			}
			if dialect["provider-1 codex-app-server"] == 0 || dialect["provider-2 codex-app-server"] == 0 || len(dialect) != 2 {
				t.Errorf("JSON-RPC messages by channel and dialect: %v", dialect)
			}
		})
	}
}

// TestCodexExitDuringServerStop: the same app-server leaving Codex's
// approval request unanswered (synth.CodexUnanswered) passes conformance
// when it exits after the driver signalled the server: the stop cut it
// off.
func TestCodexExitDuringServerStop(t *testing.T) {
	ch, _ := synth.CodexChannel("provider-1", synth.CodexUnanswered)
	last := len(ch) - 1
	stop := bundle.Event{Kind: bundle.KindProcSignal, Conn: replay.ServerConn, Name: "SIGTERM"}
	ch = append(append(append([]bundle.Event{}, ch[:last]...), stop), ch[last])
	evs, _ := insert(synth.MustBuild(synth.Options{Scenario: "idle"}).Events, 3, ch...)
	e := replay.NewEngine(delivery.EngineOptions(nil))
	feedAll(t, e, evs)
	if c := conformanceOf(t, e.Verdict()); c.Failure != nil {
		t.Errorf("conformance failed: %+v", c.Failure)
	}
}

// TestCodexChannelConforms: the trimmed real app-server traffic synth uses
// (synth.CodexFine) passes conformance beside a passing run, so each Codex
// fault's failure is its own.
func TestCodexChannelConforms(t *testing.T) {
	ch, at := synth.CodexChannel("provider-1", synth.CodexFine)
	if at != -1 {
		t.Fatalf("the fine channel labels a fault at %d", at)
	}
	evs, _ := insert(synth.MustBuild(synth.Options{Scenario: "idle"}).Events, 3, ch...)
	e := replay.NewEngine(delivery.EngineOptions(nil))
	feedAll(t, e, evs)
	if v := e.Verdict(); v.Status != assert.StatusPassed {
		t.Errorf("verdict %s: %+v", v.Status, v.Failure)
	}
}

// TestRecordedCodexLongLine replays a real 'record --stdio -- codex
// app-server' session whose command printed 2.1 MB: Codex's item/completed
// for it (its aggregatedOutput cut by Codex) is a line of 1.05 MB, which the
// recorder cut into pieces at its 1 MiB cap.
// The decoder joins them: nothing is undecodable, conformance passes, and
// the command's item completed.
func TestRecordedCodexLongLine(t *testing.T) {
	var item string
	res, err := replay.ReplayFile(context.Background(), "../protocol/testdata/codex-long-line.zst", &replay.Options{Engine: &replay.EngineOptions{
		OnEvent: func(pe *protocol.Event) {
			if pe.Protocol == protocol.Codex && pe.Method == "item commandExecution" && pe.Kind != protocol.KindRequest {
				item = fmt.Sprintf("%s %s", pe.Kind, pe.Call.Outcome)
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict.Status != assert.StatusPassed || res.DecodeErrorCount != 0 {
		t.Errorf("status %s, %d decode errors %+v", res.Verdict.Status, res.DecodeErrorCount, res.DecodeErrors)
	}
	if item != "response success" {
		t.Errorf("the command's item ended %q, want a response, success", item)
	}
}
