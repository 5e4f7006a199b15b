package cassette_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/model/cassette"
	"github.com/wireproof/wireproof/record"
)

var client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: 5 * time.Minute}

// idleSession are a real Claude CLI's requests of one idle session
// (model/testdata/requests), in order.
var idleSession = []string{"idle-1-load-tools", "idle-2-delegate", "idle-3-release", "idle-4-wake", "idle-5-ack"}

// runValues are one run's run-bound values, written into the session's
// requests: the gate's port and path, the task id, the gate's secret.
type runValues struct{ port, gate, task, secret string }

var (
	run1 = runValues{"47312", "0b7cf1a2-3d4e-4f50-8a6b-7c8d9e0f1a2b", "1b845390-5e71-4e00-b76a-f0e85bc7c878", "RESULT_80c90278-b1cd-4c11-bfe0-24039d04592f"}
	run2 = runValues{"51999", "b330e73c-abad-488c-888b-d0069d6f5f5e", "01aebc97-4699-4e80-a3ef-f1210a3739c8", "RESULT_5f0e2a11-9c3d-4e8f-a1b2-c3d4e5f60718"}
)

// sessionBody is a request of the session with run's values.
func sessionBody(t *testing.T, name string, run runValues) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "requests", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.NewReplacer("127.0.0.1:47312/gate/abc", "127.0.0.1:"+run.port+"/"+run.gate,
		"task-1", run.task, "SECRET-42", run.secret).Replace(string(b)))
}

// post sends a Messages request to base and returns the status, the
// cassette header and the answer (assembled from its stream, or the body).
func post(t *testing.T, base string, body []byte) (int, string, string) {
	t.Helper()
	resp, text := postTo(t, base+"/v1/messages?beta=true", "x-api-key", "sk-ant-test", body)
	defer resp.Body.Close()
	if text != nil {
		return resp.StatusCode, resp.Header.Get(cassette.HeaderCassette), *text
	}
	asm := anthropic.NewAssembler()
	if err := anthropic.ReadEvents(resp.Body, func(name string, data []byte) error {
		if err := asm.Feed(name, data); err != nil {
			t.Errorf("event %s: %v", name, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !asm.Complete() {
		t.Errorf("the stream ended before message_stop")
	}
	b, _ := json.Marshal(asm.Message().Content)
	return resp.StatusCode, resp.Header.Get(cassette.HeaderCassette), string(b)
}

// postTo posts a JSON body to url with the key header and returns the
// response, and its body read whole when it is not an event stream (nil
// for a stream, left to read).
func postTo(t *testing.T, url, key, value string, body []byte) (*http.Response, *string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set(key, value)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, nil
	}
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	return resp, &text
}

// recordSession records the session with run's values through the
// recording proxy in front of the scripted model, on loopback, and returns
// the bundle's path and each answer.
func recordSession(t *testing.T, run runValues) (string, []string) {
	t.Helper()
	return recordCalls(t, idleSession, func(name string) []byte { return sessionBody(t, name, run) }, post)
}

// recordCalls sends the requests named (their bodies from body) with send
// through the recording proxy in front of the scripted model, on
// loopback, and returns the bundle's path and each answer.
func recordCalls(t *testing.T, names []string, body func(string) []byte, send func(*testing.T, string, []byte) (int, string, string)) (string, []string) {
	t.Helper()
	ctx := context.Background()
	srv, err := model.Start(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "calls.zst")
	w, err := bundle.Create(path, bundle.Header{Format: bundle.FormatVersion, Tool: "cassette-test", Started: time.Now().UTC()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.New(w, nil)
	up, _ := url.Parse(srv.URL())
	proxy, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: up, ConnPrefix: "model-"})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := record.Listen(ctx, "127.0.0.1:0", proxy)
	if err != nil {
		t.Fatal(err)
	}
	var answers []string
	for _, name := range names {
		status, _, ans := send(t, ps.URL, body(name))
		if status != 200 {
			t.Fatalf("%s: status %d: %s", name, status, ans)
		}
		answers = append(answers, ans)
	}
	if err := ps.Close(ctx); err != nil {
		t.Error(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path, answers
}

// serve serves the cassette of the bundles at paths on loopback.
func serve(t *testing.T, opts *cassette.Options, paths ...string) (string, *cassette.Handler) {
	t.Helper()
	c, err := cassette.Load(context.Background(), paths...)
	if err != nil {
		t.Fatal(err)
	}
	h := cassette.NewHandler(c, opts)
	s, err := model.Serve(context.Background(), "", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.URL(), h
}

// TestReplayBindsThisRun: a session recorded with one run's values is
// played to the same session with another run's (gate port and path, task
// id, secret): every request matches, and each answer is the recorded one
// with the recorded values replaced by this run's, so the delegation names
// this run's gate URL and the ACK carries this run's secret, which the
// live task_status result showed.
func TestReplayBindsThisRun(t *testing.T) {
	path, recorded := recordSession(t, run1)
	base, h := serve(t, &cassette.Options{Fast: true}, path)
	bind := strings.NewReplacer(run1.port, run2.port, run1.gate, run2.gate, run1.task, run2.task, run1.secret, run2.secret)
	for i, name := range idleSession {
		status, hdr, got := post(t, base, sessionBody(t, name, run2))
		if status != 200 || hdr != "played" {
			t.Fatalf("%s: status %d %s: %s", name, status, hdr, got)
		}
		if diff := cmp.Diff(bind.Replace(recorded[i]), got); diff != "" {
			t.Errorf("%s: answer (-recorded, bound +played):\n%s", name, diff)
		}
	}
	if !strings.Contains(recorded[1], run1.gate) || !strings.Contains(recorded[4], "ACK:"+run1.secret) {
		t.Errorf("the recorded answers do not carry the run's values: %q, %q", recorded[1], recorded[4])
	}
	r := h.Report()
	if r.Played != len(idleSession) || r.Missed != 0 || len(r.Unplayed) != 0 {
		t.Errorf("report %+v", r)
	}
}

// TestMissExplained: a prompt the cassette never saw is answered with an
// invalid_request_error naming the nearest recorded request and the first
// field that differs, and reported.
func TestMissExplained(t *testing.T) {
	path, _ := recordSession(t, run1)
	var seen []cassette.Miss
	base, h := serve(t, &cassette.Options{Fast: true, OnMiss: func(m cassette.Miss) { seen = append(seen, m) }}, path)
	body := bytes.Replace(sessionBody(t, "idle-1-load-tools", run2), []byte("Use T3 delegate_task"), []byte("Use T3 delegate_work"), 1)
	status, hdr, got := post(t, base, body)
	if status != http.StatusBadRequest || hdr != "miss" || !strings.Contains(got, `"invalid_request_error"`) {
		t.Fatalf("status %d %s: %s", status, hdr, got)
	}
	r := h.Report()
	if r.Missed != 1 || len(r.Misses) != 1 || len(seen) != 1 {
		t.Fatalf("report %+v, OnMiss %d", r, len(seen))
	}
	m := r.Misses[0]
	if m.Path != "messages[0].content[1].text" || !strings.Contains(m.Closest, "model-h1") || !strings.Contains(m.Diff, "delegate_work") {
		t.Errorf("miss %+v", m)
	}
	if !strings.Contains(got, m.Path) {
		t.Errorf("the error does not name %s: %s", m.Path, got)
	}
}
