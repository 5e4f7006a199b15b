package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/replay"
)

// jsonRPCPeer is the "jsonrpc-peer" helper: a scripted JSON-RPC 2.0 peer over
// NDJSON on stdio, as a provider process is: "initialize" and "tools/call"
// succeed (tools/call after a progress notification), a batch gets a batch
// of answers, an unknown method gets a -32601 error object, notifications
// get nothing.
func jsonRPCPeer() int {
	type request struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	answer := func(r request) string {
		switch r.Method {
		case "initialize":
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"peer"}}}`, r.ID)
		case "tools/call", "ping":
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, r.ID)
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found: %s"}}`, r.ID, r.Method)
	}
	w := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) > 0 && line[0] == '[' {
			var batch []request
			_ = json.Unmarshal(line, &batch)
			var out []string
			for _, r := range batch {
				if r.ID != nil {
					out = append(out, answer(r))
				}
			}
			fmt.Fprintf(w, "[%s]\n", strings.Join(out, ","))
			w.Flush()
			continue
		}
		var r request
		if json.Unmarshal(line, &r) != nil || r.ID == nil {
			continue // a notification
		}
		if r.Method == "tools/call" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1}}`+"\n", r.ID)
		}
		fmt.Fprintln(w, answer(r))
		w.Flush()
	}
	return 0
}

// The client's side of the conversation, one message (or batch) per line,
// and how many answer lines each gets.
var jsonRPCScript = []struct {
	line    string
	answers int
}{
	{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, 1},
	{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
	{`{"jsonrpc":"2.0","id":"call-a","method":"tools/call","params":{"name":"echo","arguments":{}}}`, 2},
	{`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}]`, 1},
	{`{"jsonrpc":"2.0","id":5,"method":"no/such"}`, 1},
}

// recordJSONRPCPeer records the script through `wireproof record --stdio`
// around the scripted peer, sending each line only after the answers to the
// previous one arrived, and returns the bundle's path.
func recordJSONRPCPeer(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "peer.zst")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wireproofBin, "record", "--stdio", "-o", out, "--", self)
	cmd.Env = testkit.HelperEnv("jsonrpc-peer")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	answers := bufio.NewReader(stdout)
	for _, step := range jsonRPCScript {
		if _, err := io.WriteString(stdin, step.line+"\n"); err != nil {
			t.Fatal(err)
		}
		for range step.answers {
			if _, err := answers.ReadString('\n'); err != nil {
				t.Fatalf("reading the peer's answer to %s: %v\n%s", step.line, err, stderr.String())
			}
		}
	}
	stdin.Close()
	io.Copy(io.Discard, answers)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wireproof record --stdio: %v\n%s", err, stderr.String())
	}
	return out
}

// TestStdioJSONRPCConformance: a bundle recorded with `record --stdio` around
// a scripted JSON-RPC 2.0 peer (a real child process) replays with its calls
// correlated by id (numbers, strings, a batch, an error, notifications), as
// inspect --calls and the report show, and passes the protocol-conformance
// suite. Corrupted copies fail the matching check at the corrupted line.
func TestStdioJSONRPCConformance(t *testing.T) {
	path := recordJSONRPCPeer(t)

	res, err := replay.ReplayFile(context.Background(), path, delivery.Options(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict.Status != assert.StatusPassed || len(res.Verdict.Suites) != 1 || res.Verdict.Suites[0].Suite != assert.SuiteConformance {
		t.Fatalf("verdict %+v, want passed by the conformance suite alone", res.Verdict)
	}
	if res.DecodeErrorCount != 0 {
		t.Errorf("decode errors: %+v", res.DecodeErrors)
	}

	var out bytes.Buffer
	if err := runInspect(context.Background(), inspectOptions{Calls: true, stdout: &out}, []string{path}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5 call(s)", `id 1 `, "initialize", `id "call-a"`, "tools/call", `id 3 `, `id 4 `, "ping", `id 5 `, "no/such"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect --calls lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Count(out.String(), "success") != 4 || strings.Count(out.String(), "failure") != 1 || strings.Contains(out.String(), "open") {
		t.Errorf("inspect --calls: want 4 successes and 1 failure, all ended:\n%s", out.String())
	}

	html := filepath.Join(t.TempDir(), "r.html")
	if err := exec.Command(wireproofBin, "report", "-o", html, path).Run(); err != nil {
		t.Fatalf("report: %v", err)
	}
	rep, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tools/call", "no/such", "call-a"} {
		if !bytes.Contains(rep, []byte(want)) {
			t.Errorf("the report's RPC calls lack %q", want)
		}
	}

	_, evs := recordedEvents(t, path)
	lineOf := func(dir bundle.Dir, sub string) int {
		for i, ev := range evs {
			if ev.Kind == bundle.KindStdioLine && ev.Dir == dir && bytes.Contains(ev.Body.Data, []byte(sub)) {
				return i
			}
		}
		t.Fatalf("no %s line with %s", dir, sub)
		return -1
	}
	for _, tc := range []struct {
		name, check string
		corrupt     func([]bundle.Event) ([]bundle.Event, int) // returns the index of the line that breaks the rule
	}{
		{"response to an unknown id", assert.CheckAnswersRequest, func(evs []bundle.Event) ([]bundle.Event, int) {
			i := lineOf(bundle.DirServerToClient, `"id":"call-a","result"`)
			evs[i].Body = bundle.Text(bytes.Replace(evs[i].Body.Data, []byte(`"call-a"`), []byte(`"call-b"`), 1))
			return evs, i
		}},
		{"reused id", assert.CheckIDNotReused, func(evs []bundle.Event) ([]bundle.Event, int) {
			i := lineOf(bundle.DirClientToServer, `"method":"tools/call"`)
			dup := evs[i]
			evs = append(evs[:i+1], append([]bundle.Event{dup}, evs[i+1:]...)...)
			return evs, i + 1
		}},
		{"missing jsonrpc", assert.CheckJSONRPCEnvelope, func(evs []bundle.Event) ([]bundle.Event, int) {
			i := lineOf(bundle.DirClientToServer, `"id":5`)
			evs[i].Body = bundle.Text(bytes.Replace(evs[i].Body.Data, []byte(`"jsonrpc":"2.0",`), nil, 1))
			return evs, i
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, evs := recordedEvents(t, path)
			evs, at := tc.corrupt(evs)
			bad := filepath.Join(t.TempDir(), "bad.zst")
			w, err := bundle.Create(bad, bundle.Header{Format: bundle.FormatVersion, Tool: "test"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var atSeq uint64
			for i := range evs {
				if evs[i].Kind == bundle.KindTrailer {
					continue
				}
				seq, err := w.Append(&evs[i])
				if err != nil {
					t.Fatal(err)
				}
				if i == at {
					atSeq = seq
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			res, err := replay.ReplayFile(context.Background(), bad, delivery.Options(nil))
			if err != nil {
				t.Fatal(err)
			}
			f := res.Verdict.Failure
			if res.Verdict.Status != assert.StatusFailed || f == nil || f.Check != tc.check || f.Seq != atSeq {
				t.Fatalf("verdict %+v, want %s failed at seq %d", res.Verdict, tc.check, atSeq)
			}
			if f.Expected == "" || f.Seen == "" {
				t.Errorf("failure without expected or seen: %+v", f)
			}
		})
	}
}
