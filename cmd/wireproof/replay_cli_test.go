package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
)

const golden = "../../fixtures/golden"

func replayOut(t *testing.T, opts replayOptions, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	opts.stdout, opts.stderr = &out, &errOut
	if opts.Jobs == 0 {
		opts.Jobs = 2
	}
	err := runReplay(context.Background(), opts, args)
	return out.String(), err
}

// TestReplayJSONDeterministic: the same bundles give byte-identical --json
// output across runs, whatever the parallelism.
func TestReplayJSONDeterministic(t *testing.T) {
	a, errA := replayOut(t, replayOptions{JSON: true, Jobs: 1}, golden)
	b, errB := replayOut(t, replayOptions{JSON: true, Jobs: 4}, golden)
	if errA == nil || errB == nil {
		t.Fatal("the corpus has failing bundles; replay reported success")
	}
	if a != b {
		t.Errorf("--json output differs between runs:\n%s", cmp.Diff(a, b))
	}
	if n := strings.Count(a, "\n"); n < 30 {
		t.Errorf("%d lines of --json output, want one per bundle", n)
	}
}

func TestReplayExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.zst")
	if err := os.WriteFile(bad, []byte("not a bundle"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts replayOptions
		args []string
		code int
		line string // a line the output must contain
	}{
		{"passing bundle", replayOptions{}, []string{golden + "/idle.zst"}, exitOK, "PASS  idle  ../../fixtures/golden/idle.zst  reproduced"},
		{"failing bundle", replayOptions{}, []string{golden + "/idle-wrong-result.zst"}, exitCheckFailed, "FAIL  idle  ../../fixtures/golden/idle-wrong-result.zst  terminal-child-has-secret @36: Child published an incorrect or failed result  reproduced"},
		{"truncated bundle", replayOptions{}, []string{golden + "/idle-truncated.zst"}, exitCheckFailed, "no live verdict  (truncated)"},
		{"unreadable after the others", replayOptions{}, []string{bad, golden + "/idle.zst"}, exitUnreadable, "PASS  idle"},
		{"missing file", replayOptions{}, []string{filepath.Join(dir, "nope.zst")}, exitUnreadable, ""},
		{"bad shard", replayOptions{Shard: "3/2"}, []string{golden}, exitUsage, ""},
		{"bad jobs", replayOptions{Jobs: -1}, []string{golden}, exitUsage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := replayOut(t, tt.opts, tt.args...)
			if got := exitCode(err, false); got != tt.code {
				t.Errorf("exit code = %d, want %d (err %v)\n%s", got, tt.code, err, out)
			}
			if !strings.Contains(out, tt.line) {
				t.Errorf("output lacks %q:\n%s", tt.line, out)
			}
		})
	}
}

// TestReplayShards: the shards of a corpus are disjoint and cover it.
func TestReplayShards(t *testing.T) {
	refs, err := collectBundles(context.Background(), []string{golden})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i := 1; i <= 3; i++ {
		for _, r := range shard(refs, i, 3) {
			seen[r.Rel]++
		}
	}
	if len(seen) != len(refs) {
		t.Errorf("shards cover %d of %d bundles", len(seen), len(refs))
	}
	for rel, n := range seen {
		if n != 1 {
			t.Errorf("%s is in %d shards", rel, n)
		}
	}
}

// A plain recording (no verification run in it) is judged by the
// protocol-conformance suite alone: PASS when its traffic follows its
// protocols, FAIL (exit 1) with the check, the seq and what was seen when not.
func TestReplayJudgesPlainRecordings(t *testing.T) {
	write := func(name string, evs ...bundle.Event) string {
		path := filepath.Join(t.TempDir(), name)
		w, err := bundle.Create(path, bundle.Header{Format: bundle.FormatVersion, Tool: "test"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if _, err := w.Append(&ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("plain.zst",
		bundle.Event{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/"},
		bundle.Event{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
		bundle.Event{Kind: bundle.KindHTTPEnd, Conn: "h1"})
	junit := filepath.Join(t.TempDir(), "junit.xml")
	out, err := replayOut(t, replayOptions{JUnit: junit}, good, golden+"/idle.zst")
	if code := exitCode(err, false); code != exitOK {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	for _, want := range []string{"PASS  -  " + good + "  no live verdict", "2 passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(x), `skipped="0"`) || !strings.Contains(string(x), `failures="0"`) {
		t.Errorf("JUnit does not pass the plain recording:\n%s", x)
	}

	bad := write("bad.zst",
		bundle.Event{Kind: bundle.KindStdioLine, Conn: "stdio", Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))},
		bundle.Event{Kind: bundle.KindStdioLine, Conn: "stdio", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"jsonrpc":"2.0","id":2,"result":{}}`))})
	out, err = replayOut(t, replayOptions{}, bad)
	if code := exitCode(err, false); code != exitCheckFailed {
		t.Fatalf("exit %d, want %d\n%s", code, exitCheckFailed, out)
	}
	for _, want := range []string{"FAIL  -  " + bad + "  answers-request @2: A response answers no request in flight", "for id 2, which is not in flight"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
