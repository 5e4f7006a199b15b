package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay/synth"
)

// TestModelCassetteServes: `wireproof model --cassette BUNDLE --strict`
// answers a recorded model request with its recorded answer, a changed one
// with an API error naming the first differing field, prints the summary
// when stopped, and exits 4 for the miss.
func TestModelCassetteServes(t *testing.T) {
	events, _ := synth.ModelCalls("model-h1", "model-h2", synth.ModelFine)
	path := filepath.Join(t.TempDir(), "tape.zst")
	w, err := bundle.Create(path, bundle.Header{Format: bundle.FormatVersion, Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range events {
		if _, err := w.Append(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var first []byte
	for _, ev := range events {
		if ev.Kind == bundle.KindHTTPBody && ev.Conn == "model-h1" && ev.Dir == bundle.DirClientToServer {
			first = ev.Body.Data
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, done, _, stderr := serveModel(ctx, t, modelOptions{addr: "127.0.0.1:0", cassette: []string{path}, fast: true, strict: true})
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	post := func(body []byte) (int, string, string) {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages?beta=true", bytes.NewReader(body))
		req.Header.Set("x-api-key", "k")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("X-Wireproof-Cassette"), string(b)
	}
	if code, hdr, body := post(first); code != 200 || hdr != "played" || !strings.Contains(body, "message_stop") {
		t.Errorf("the recorded request: %d %s %s", code, hdr, body)
	}
	changed := bytes.Replace(first, []byte("Run curl"), []byte("Run wget"), 1)
	if code, hdr, body := post(changed); code != 400 || hdr != "miss" || !strings.Contains(body, "messages[0].content[0].text") {
		t.Errorf("a changed request: %d %s %s", code, hdr, body)
	}
	cancel()
	err = <-done
	if code := exitCode(err, false); code != exitPlaybackMissed {
		t.Errorf("exit %d (%v), want %d", code, err, exitPlaybackMissed)
	}
	if s := stderr.String(); !strings.Contains(s, "cassette: played 1, repeated 0, missed 1, never played 1") || !strings.Contains(s, "miss: wireproof cassette: no recorded model call matches") {
		t.Errorf("stderr %q", s)
	}
}

func TestModelCassetteBadFlags(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"model", "--cassette", filepath.Join(t.TempDir(), "none.zst")}, exitUnreadable, "cassette: stat"},
		{[]string{"model", "--cassette", t.TempDir()}, exitUnreadable, "no bundle (*.zst) in directory"},
		{[]string{"model", "--cassette", "x.zst", "--fault", "model-overloaded"}, exitUsage, "--fault and --cassette cannot be combined"},
		{[]string{"model", "--strict"}, exitUsage, "--fast and --strict need --cassette"},
		{[]string{"verify", "--strict"}, exitUsage, "invalid --strict: it needs --model-cassette"},
		{[]string{"verify", "--model-cassette", "x.zst"}, exitUsage, "a model cassette needs the real CLI (--provider-cli)"},
		{[]string{"verify", "--model-ca", "ca.pem"}, exitUsage, "it needs --model-upstream"},
		{[]string{"verify", "--model-upstream", "ftp://h"}, exitUsage, "an http or https URL of a Messages API"},
		{[]string{"verify", "--model-upstream", "https://u:secret@h"}, exitUsage, "no user or password in the URL"},
		{[]string{"verify", "--model-upstream", "https://h"}, exitUsage, "a model upstream needs the real CLI (--provider-cli)"},
		// --real-model without --model-upstream: the public API here
		// (ANTHROPIC_BASE_URL is cleared below).
		{[]string{"verify", "--real-model"}, exitUsage, `invalid --real-model "https://api.anthropic.com": a model upstream needs the real CLI (--provider-cli)`},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// serveModel runs `wireproof model` with opts until ctx ends and returns its
// URL once it serves, the channel its result comes on, and its output.
func serveModel(ctx context.Context, t *testing.T, opts modelOptions) (string, chan error, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	opts.stdout, opts.stderr = stdout, stderr
	urls := make(chan string, 1)
	opts.ready = func(u string) { urls <- u }
	done := make(chan error, 1)
	go func() { done <- runModel(ctx, opts) }()
	select {
	case url := <-urls:
		return url, done, stdout, stderr
	case err := <-done:
		t.Fatalf("model ended before serving: %v", err)
	}
	return "", nil, nil, nil
}
