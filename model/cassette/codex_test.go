package cassette_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/cassette"
	"github.com/wireproof/wireproof/model/openai"
)

// childSession are a real Codex CLI 0.169.0's requests of one child
// session (model/testdata/responses): the gate fetched with exec_command,
// its session polled with write_stdin, the answer.
var childSession = []string{"codex-child-1-fetch", "codex-child-2-poll", "codex-child-3-answer"}

// codexRun is one Codex run's run-bound values: the gate's port, the exec
// session, the secret, the leading digits of Codex's item UUIDs (v7, time
// ordered) and the wall times.
type codexRun struct{ port, session, secret, uuid, wall string }

var (
	codex1 = codexRun{"47312", "20868", "RESULT_80c90278-b1cd-4c11-bfe0-24039d04592f", "01a231f", "Wall time: 30.0011 seconds"}
	codex2 = codexRun{"51999", "731", "RESULT_5f0e2a11-9c3d-4e8f-a1b2-c3d4e5f60718", "01b7772", "Wall time: 0.2 seconds"}
)

// codexBody is a request of the child session with run's values.
func codexBody(t *testing.T, name string, run codexRun) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "responses", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.NewReplacer("127.0.0.1:PORT", "127.0.0.1:"+run.port, "SECRET-123", run.secret,
		"session ID 20868", "session ID "+run.session, `\"session_id\":20868`, `\"session_id\":`+run.session,
		"Wall time: 30.0011 seconds", run.wall, "01a231f", run.uuid).Replace(string(b)))
}

// postResponses sends a Responses request to base and returns the status,
// the cassette header and the answer (the output items assembled from its
// stream, or the body).
func postResponses(t *testing.T, base string, body []byte) (int, string, string) {
	t.Helper()
	resp, text := postTo(t, base+model.ResponsesPath, "Authorization", "Bearer sk-test", body)
	defer resp.Body.Close()
	if text != nil {
		return resp.StatusCode, resp.Header.Get(cassette.HeaderCassette), *text
	}
	asm, problems, err := openai.Assemble(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("stream: %v", p)
	}
	if !asm.Complete() {
		t.Errorf("the stream ended before response.completed")
	}
	b, _ := json.Marshal(asm.Response().Output)
	return resp.StatusCode, resp.Header.Get(cassette.HeaderCassette), string(b)
}

// recordCodex records the child session with run's values through the
// recording proxy in front of the scripted model and returns the bundle's
// path and each answer.
func recordCodex(t *testing.T, run codexRun) (string, []string) {
	t.Helper()
	return recordCalls(t, childSession, func(name string) []byte { return codexBody(t, name, run) }, postResponses)
}

// TestReplayResponsesBindsThisRun: a Codex session recorded with one run's
// values (gate port, exec session, secret, item UUIDs, wall times) is
// played to the same session with another run's: every request matches,
// the poll's write_stdin names this run's exec session (the number the
// live exec_command output gave), and the answer carries this run's
// secret; the rest of each answer is the recorded one.
func TestReplayResponsesBindsThisRun(t *testing.T) {
	path, recorded := recordCodex(t, codex1)
	if !strings.Contains(recorded[1], `session_id\":`+codex1.session) || !strings.Contains(recorded[2], codex1.secret) {
		t.Fatalf("the recorded answers do not carry the run's values: %q, %q", recorded[1], recorded[2])
	}
	base, h := serve(t, &cassette.Options{Fast: true}, path)
	bind := strings.NewReplacer(codex1.port, codex2.port, codex1.secret, codex2.secret,
		`session_id\":`+codex1.session, `session_id\":`+codex2.session)
	for i, name := range childSession {
		status, hdr, got := postResponses(t, base, codexBody(t, name, codex2))
		if status != 200 || hdr != "played" {
			t.Fatalf("%s: status %d %s: %s", name, status, hdr, got)
		}
		want := bind.Replace(recorded[i])
		if diff := cmp.Diff(canonArgs(t, want), canonArgs(t, got)); diff != "" {
			t.Errorf("%s: answer (-recorded, bound +played):\n%s", name, diff)
		}
	}
	r := h.Report()
	if r.Played != len(childSession) || r.Missed != 0 || len(r.Unplayed) != 0 {
		t.Errorf("report %+v", r)
	}
}

// canonArgs is output items with each function call's arguments decoded
// (a bound argument is written again, its keys in another order).
func canonArgs(t *testing.T, items string) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal([]byte(items), &out); err != nil {
		t.Fatalf("%v: %s", err, items)
	}
	for _, it := range out {
		if a, ok := it["arguments"].(string); ok {
			var v any
			if err := json.Unmarshal([]byte(a), &v); err != nil {
				t.Fatalf("arguments %q: %v", a, err)
			}
			it["arguments"] = v
		}
	}
	return out
}

// TestResponsesMissExplained: a Codex request the cassette never saw is
// answered 400 invalid_request_error in the Responses API's shape, naming
// the nearest recorded request and the first differing input field.
func TestResponsesMissExplained(t *testing.T) {
	path, _ := recordCodex(t, codex1)
	base, h := serve(t, &cassette.Options{Fast: true}, path)
	body := bytes.Replace(codexBody(t, "codex-child-3-answer", codex2), []byte("Process exited with code 0"), []byte("Process exited with code 7"), 1)
	status, hdr, got := postResponses(t, base, body)
	if status != http.StatusBadRequest || hdr != "miss" {
		t.Fatalf("status %d %s: %s", status, hdr, got)
	}
	e := openai.ParseError([]byte(got))
	if e == nil || e.Type != openai.ErrInvalidRequest {
		t.Fatalf("not a Responses API invalid_request_error: %s", got)
	}
	r := h.Report()
	if r.Missed != 1 || len(r.Misses) != 1 {
		t.Fatalf("report %+v", r)
	}
	m := r.Misses[0]
	if !strings.HasPrefix(m.Request, "POST /v1/responses (") || !strings.HasPrefix(m.Path, "input[") || !strings.HasSuffix(m.Path, "].output") ||
		!strings.Contains(m.Diff, "code 7") || !strings.Contains(m.Closest, "(seq ") {
		t.Errorf("miss %+v", m)
	}
	if !strings.Contains(e.Message, "closest recorded: ") || !strings.Contains(e.Message, m.Path) {
		t.Errorf("the error does not explain the miss: %s", e.Message)
	}
}

// TestRepeatedCallGetsFreshIDs: a request made again after every matching
// recorded call was played (a provider resending it after a restart) is
// answered with the recorded answer again, with new response, item and
// call ids, as a live model answers: the recorded ones again would be a
// model reusing its ids. The rest of the answer is the same.
func TestRepeatedCallGetsFreshIDs(t *testing.T) {
	path, _ := recordCodex(t, codex1)
	base, h := serve(t, &cassette.Options{Fast: true}, path)
	body := codexBody(t, childSession[0], codex2)
	var answers []string
	for range 2 {
		status, hdr, got := postResponses(t, base, body)
		if status != 200 || hdr != "played" {
			t.Fatalf("status %d %s: %s", status, hdr, got)
		}
		answers = append(answers, got)
	}
	idRE := regexp.MustCompile(`\b(?:resp|msg|fc|call|rs)_[A-Za-z0-9-]{8,}`)
	first, second := idRE.FindAllString(answers[0], -1), idRE.FindAllString(answers[1], -1)
	if len(first) == 0 || len(first) != len(second) {
		t.Fatalf("ids %v then %v: want the same number, some", first, second)
	}
	for _, id := range second {
		if strings.Contains(answers[0], id) {
			t.Errorf("the repeated answer reuses id %s", id)
		}
	}
	if a, b := idRE.ReplaceAllString(answers[0], "ID"), idRE.ReplaceAllString(answers[1], "ID"); a != b {
		t.Errorf("the repeated answer differs beyond its ids:\n%s\n%s", a, b)
	}
	if r := h.Report(); r.Played != 2 || r.Repeated != 1 {
		t.Errorf("report %+v, want 2 played, 1 repeated", r)
	}
}
