package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
)

// TestScan: a run directory with a key in a bundle event, in the report
// derived from it and in a results file is found in each, named by file and
// seq or line, the key masked; placeholders do not count; a clean directory,
// reached through a symbolic link, exits 0.
func TestScan(t *testing.T) {
	const key = "sk-proj-Q7xVb2LmN9pK4wR8tY1zA6cD3fG5hJ0e"
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	os.Mkdir(runs, 0o755)
	path := filepath.Join(runs, "run.zst")
	w, err := bundle.Create(path, bundle.Header{Format: bundle.FormatVersion, Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []bundle.Event{
		{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStdout, Body: bundle.Text([]byte(`token=[REDACTED] Authorization: Bearer [REDACTED]`))},
		{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStdout, Body: bundle.Text([]byte("loaded OPENAI_API_KEY=" + key))},
	} {
		if _, err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "report", path); code != exitOK {
		t.Fatalf("report exit %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(filepath.Join(runs, "results.json"), []byte("[\n{\"note\":\"x\"},\n{\"auth\":\"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\"}\n]\n"), 0o600)

	code, out, errOut := runCLI(t, "scan", runs)
	if code != exitCheckFailed {
		t.Fatalf("scan exit %d, want %d\n%s%s", code, exitCheckFailed, out, errOut)
	}
	for _, want := range []string{
		path + "  seq 2 proc.log  openai-key  ",
		filepath.Join(runs, "run.html") + ":",
		filepath.Join(runs, "results.json") + ":3  jwt  ",
		"sk-p************(40 bytes)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scan's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, key) || strings.Contains(out, "dozjgNryP4J3") || strings.Contains(out, "seq 1 ") {
		t.Errorf("scan printed a key whole, or counted a placeholder:\n%s", out)
	}
	if !strings.Contains(errOut, "credential-looking string(s)") {
		t.Errorf("stderr: %s", errOut)
	}

	clean := filepath.Join(dir, "clean")
	os.Mkdir(clean, 0o755)
	copyTestFile(t, golden+"/idle.zst", filepath.Join(clean, "idle.zst"))
	copyTestFile(t, golden+"/idle.verdict.json", filepath.Join(clean, "idle.verdict.json"))
	link := filepath.Join(dir, "link")
	if err := os.Symlink(clean, link); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "scan", link)
	if code != exitOK || !strings.Contains(errOut, "no credential-looking string in 2 file(s)") {
		t.Errorf("scan of a clean directory through a link: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := runCLI(t, "scan", filepath.Join(dir, "missing")); code != exitUnreadable {
		t.Errorf("scan of a missing path exit %d, want %d", code, exitUnreadable)
	}
}

func copyTestFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReplayFollowsLinkedDirectory: a directory given through a symbolic
// link is replayed like the directory.
func TestReplayFollowsLinkedDirectory(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	copyTestFile(t, golden+"/idle.zst", filepath.Join(real, "idle.zst"))
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	out, err := replayOut(t, replayOptions{}, link)
	if code := exitCode(err, false); code != exitOK || !strings.Contains(out, "PASS  idle  "+filepath.Join(link, "idle.zst")) {
		t.Errorf("replay of a linked directory: exit %d\n%s", code, out)
	}
}

// TestEventCountsAgree: inspect, the report, replay --json and index count
// a bundle's events alike: the header included, as its trailer does.
func TestEventCountsAgree(t *testing.T) {
	path := golden + "/idle.zst"
	c, err := bundle.ReadFile(path, nil)
	if err != nil || c.Trailer == nil {
		t.Fatalf("reading %s: %v (trailer %v)", path, err, c != nil && c.Trailer != nil)
	}
	want := strconv.FormatUint(c.Trailer.Events, 10)
	_, out, _ := runCLI(t, "inspect", path)
	if !strings.Contains(out, "\nevents      "+want+"\n") {
		t.Errorf("inspect does not count %s events:\n%s", want, out)
	}
	js, _ := replayOut(t, replayOptions{JSON: true}, path)
	if !strings.Contains(js, `"events":`+want) {
		t.Errorf("replay --json does not count %s events:\n%s", want, js)
	}
	_, idx, _ := runCLI(t, "index", path)
	if !strings.Contains(idx, `"events":`+want) {
		t.Errorf("index does not count %s events:\n%s", want, idx)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	runCLI(t, "report", "-o", html, path)
	if b, _ := os.ReadFile(html); !strings.Contains(string(b), "Timeline ("+want+" events)") {
		t.Errorf("the report does not count %s events", want)
	}
}

// TestScanKeptWorkspace: the real Claude CLI's transcripts and MCP logs in a
// workspace kept by verify --keep-workspace are JSON lines (.jsonl); a key
// in one is found, masked.
func TestScanKeptWorkspace(t *testing.T) {
	const key = "sk-ant-api03-Q7xVb2LmN9pK4wR8tY1zA6cD3fG5hJ0e"
	dir := t.TempDir()
	projects := filepath.Join(dir, "idle-1.work", "provider-home", ".claude", "projects", "-tmp-work")
	if err := os.MkdirAll(projects, 0o755); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(projects, "e83fd4b2-31df-42d8-9d1b-03f30697b7a0.jsonl")
	if err := os.WriteFile(transcript, []byte(`{"type":"user","message":{"content":"hi"}}`+"\n"+`{"type":"assistant","message":{"content":"export ANTHROPIC_API_KEY=`+key+`"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "scan", dir)
	if code != exitCheckFailed || !strings.Contains(out, transcript+":2  anthropic-key  ") || strings.Contains(out, key) {
		t.Errorf("scan of a kept workspace: exit %d, want %d with %s:2 masked\n%s%s", code, exitCheckFailed, transcript, out, errOut)
	}
}

// TestScanUnreadableNotCounted: a bundle scan could not read (empty, or
// damaged part of the way) is not counted among the files scanned, and the
// summary says how many could not be read, so "no credential-looking string"
// never stands for a file that was not read; a damaged one exits 7.
func TestScanUnreadableNotCounted(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.zst")
	os.WriteFile(empty, nil, 0o600)
	code, _, errOut := runCLI(t, "scan", empty)
	if code != exitUnreadable || !strings.Contains(errOut, "no credential-looking string in 0 file(s) scanned; 1 could not be read in full") {
		t.Errorf("scan of an empty file: exit %d, want %d\n%s", code, exitUnreadable, errOut)
	}

	// A format 2 bundle (a checkpoint per frame): a bit flipped a third of
	// the way in is damage after the first frame.
	b, err := os.ReadFile(golden + "/idle-model-bad-event.zst")
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0x10
	flipped := filepath.Join(dir, "flipped.zst")
	os.WriteFile(flipped, b, 0o600)
	code, _, errOut = runCLI(t, "scan", flipped, golden+"/idle.verdict.json")
	if code != exitDamaged || !strings.Contains(errOut, "in 1 file(s) scanned; 1 could not be read in full") || !strings.Contains(errOut, "is damaged") {
		t.Errorf("scan of a damaged bundle: exit %d, want %d\n%s", code, exitDamaged, errOut)
	}
}

// TestScanSplitAcrossDeltas: a bundle recorded before the recorder joined
// deltas holds a key in two text_delta events of a model's answer (an SSE
// body cut anywhere into http.body events) and in two Codex
// item/agentMessage/delta stdio lines; no event holds it whole, yet scan
// finds it in each joined text, at the seq of its first piece, masked.
func TestScanSplitAcrossDeltas(t *testing.T) {
	const key = "sk-proj-Q7xVb2LmN9pK4wR8tY1zA6cD3fG5hJ0e"
	sse := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ACK:" + key[:20] + "\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + key[20:] + "\"}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	path := filepath.Join(t.TempDir(), "old.zst")
	w, err := bundle.Create(path, bundle.Header{Format: bundle.FormatVersion, Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs := []bundle.Event{
		{Kind: bundle.KindHTTPRequest, Conn: "model-h1", Method: "POST", URL: "/v1/messages"},
		{Kind: bundle.KindHTTPResponse, Conn: "model-h1", Status: 200, Header: map[string][]string{"Content-Type": {"text/event-stream; charset=utf-8"}}},
	}
	for i := 0; i < len(sse); i += 50 { // cut anywhere, as a relay's reads fall
		evs = append(evs, bundle.Event{Kind: bundle.KindHTTPBody, Conn: "model-h1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(sse[i:min(i+50, len(sse))]))})
	}
	evs = append(evs, bundle.Event{Kind: bundle.KindHTTPEnd, Conn: "model-h1"},
		bundle.Event{Kind: bundle.KindStdioLine, Conn: "provider-1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"method":"item/agentMessage/delta","params":{"itemId":"m1","delta":"` + key[:18] + `"}}`))},
		bundle.Event{Kind: bundle.KindStdioLine, Conn: "provider-1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"method":"item/agentMessage/delta","params":{"itemId":"m1","delta":"` + key[18:] + `"}}`))})
	first := 0
	for i := range evs {
		seq, err := w.Append(&evs[i])
		if err != nil {
			t.Fatal(err)
		}
		if evs[i].Kind == bundle.KindHTTPBody && first == 0 {
			first = int(seq)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "scan", path)
	if code != exitCheckFailed {
		t.Fatalf("scan exit %d, want %d\n%s%s", code, exitCheckFailed, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		path + "  seq " + strconv.Itoa(first) + " deltas  openai-key  ACK:sk-p************(40 bytes)",
		path + "  seq " + strconv.Itoa(len(evs)-1) + " deltas  openai-key  sk-p************(40 bytes)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("scan's findings:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
	if strings.Contains(out, key[:18]) || strings.Contains(out, key[20:]) {
		t.Errorf("scan printed a piece of the key:\n%s", out)
	}
}

// TestScanGivenSecret: a secret that looks like no credential (as a
// recorder killed before it closed leaves it: in T3 Chunk pieces over a
// WebSocket, and percent-encoded in a log line) is found only when given
// with --redact, in each place and spelling, reported once where it is
// also credential-looking, masked.
func TestScanGivenSecret(t *testing.T) {
	const secret = "boot-7f3a9c21e4b8d6a0"
	chunk := func(pieces ...string) []byte {
		var vals []string
		for _, p := range pieces {
			vals = append(vals, `{"kind":"event","event":{"type":"thread.message-sent","payload":{"messageId":"m1","text":"`+p+`","streaming":true}}}`)
		}
		return []byte(`{"_tag":"Chunk","requestId":"1","values":[` + strings.Join(vals, ",") + `]}`)
	}
	path := filepath.Join(t.TempDir(), "killed.zst")
	w, err := bundle.Create(path, bundle.Header{Format: bundle.FormatVersion, Tool: "test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []bundle.Event{
		{Kind: bundle.KindWSMessage, Conn: "ws-1", Dir: bundle.DirServerToClient, Type: "text", Body: bundle.Text(chunk("ACK:boo", "t-7f3a9", "c21e4b8"))},
		{Kind: bundle.KindWSMessage, Conn: "ws-1", Dir: bundle.DirServerToClient, Type: "text", Body: bundle.Text(chunk("d6a0 do", "ne"))},
		{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStdout, Body: bundle.Text([]byte("GET /x?k=boot%2D7f3a9c21e4b8d6a0"))},
		{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStdout, Body: bundle.Text([]byte("API_KEY=" + secret))},
	} {
		if _, err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "scan", path)
	if code != exitCheckFailed || strings.Count(out, "\n") != 1 || !strings.Contains(out, "seq 4 proc.log  named-secret") {
		t.Fatalf("scan without --redact: exit %d, want %d and only the named secret\n%s%s", code, exitCheckFailed, out, errOut)
	}
	code, out, errOut = runCLI(t, "scan", "--redact", secret, path)
	if code != exitCheckFailed {
		t.Fatalf("scan exit %d, want %d\n%s%s", code, exitCheckFailed, out, errOut)
	}
	want := []string{
		path + `  seq 3 proc.log  given-secret  tdout","text":"GET /x?k=boot************(23 bytes)"}`,
		path + `  seq 4 proc.log  given-secret  stdout","text":"API_KEY=boot************(21 bytes)"}`,
		path + "  seq 1 deltas  given-secret  ACK:boot************(21 bytes) done",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(out), "\n")); diff != "" {
		t.Errorf("scan's findings (-want +got):\n%s", diff)
	}
	if strings.Contains(out, secret[5:]) {
		t.Errorf("scan printed the secret:\n%s", out)
	}
}
