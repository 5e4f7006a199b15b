package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	fixturecorpus "github.com/wireproof/wireproof/fixtures/corpus"
)

// TestViewServesAndStopsOnSIGINT runs `wireproof view` as a user does: it
// prints a loopback URL, serves the corpus, and exits 0 on Ctrl-C.
func TestViewServesAndStopsOnSIGINT(t *testing.T) {
	corpus := filepath.Join("..", "..", "fixtures", "golden", "live")
	cmd, u, stderr := startView(t, nil, corpus, notABundle(t))
	c := viewCorpus(t, u)
	// The live bundles and the file that is not a bundle, shown as unreadable.
	if n := len(fixturecorpus.LiveCases()); len(c.Bundles) != n+1 || c.Bundles[n].Status != "unreadable" {
		t.Errorf("bundles: %+v", c.Bundles)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitStatus(t, cmd.Wait()); code != 0 {
		t.Errorf("exit %d after SIGINT; stderr: %s", code, stderr.String())
	}
	if _, err := http.Get(u.String()); err == nil {
		t.Error("still serving after exit")
	}
}

// startView starts `wireproof view ARGS...` with extra environment and
// returns it, the URL it printed and its stderr; the process is killed at the
// end of the test if it is still running.
func startView(t *testing.T, env []string, args ...string) (*exec.Cmd, *url.URL, *bytes.Buffer) {
	t.Helper()
	cmd, line, stderr := startWireproofEnv(t, env, append([]string{"view"}, args...)...)
	t.Cleanup(func() { cmd.Process.Kill() })
	u, err := url.Parse(line)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "" {
		t.Fatalf("printed %q: not a loopback URL", line)
	}
	return cmd, u, stderr
}

// viewCorpus is what a running viewer's /api/bundles lists.
func viewCorpus(t *testing.T, u *url.URL) (c struct {
	Bundles []struct{ Name, Status string }
}) {
	t.Helper()
	resp, err := http.Get(u.String() + "api/bundles")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&c)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestViewListsAsIndexAndReplay: view's corpus, `wireproof index` and
// `wireproof replay` list the same bundles of one directory, in the same
// order: a kept workspace (*.work) is skipped by all three, a results.json
// adds no bundle and hides none, a corrupt bundle is listed (unreadable), and
// nested directories are walked.
func TestViewListsAsIndexAndReplay(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join("..", "..", "fixtures", "golden", "live")
	copyTo := func(from, rel string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyTo(filepath.Join(live, "idle.zst"), "idle-1.zst")
	copyTo(filepath.Join(live, "idle.zst"), "idle-1.work/home/state/cache.zst") // a kept workspace
	copyTo(filepath.Join(live, "native.zst"), "nightly/b/native-1.zst")
	copyTo(filepath.Join(live, "active.zst"), "nightly/a/active-1.zst")
	copyTo(filepath.Join(live, "active.zst"), "nightly/a/active-1.work/x.zst")
	copyTo(notABundle(t), "nightly/corrupt.zst")
	// results.json names one bundle of the three beside it and one that is gone.
	results := `[{"iteration":1,"scenario":"idle","status":"passed","bundle":"` + filepath.Join(dir, "idle-1.zst") +
		`"},{"iteration":2,"scenario":"idle","status":"failed","bundle":"/gone/idle-2.zst"}]`
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(results), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(dir, "idle-1.zst"),
		filepath.Join(dir, "nightly", "a", "active-1.zst"),
		filepath.Join(dir, "nightly", "b", "native-1.zst"),
		filepath.Join(dir, "nightly", "corrupt.zst"),
	}
	paths := func(out string) []string {
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e struct{ Path string }
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			got = append(got, e.Path)
		}
		return got
	}
	code, out, stderr := runBin(t, "index", dir)
	if code != exitUnreadable { // the corrupt bundle
		t.Errorf("index: exit %d, stderr %s", code, stderr)
	}
	if d := cmp.Diff(want, paths(out)); d != "" {
		t.Errorf("index (-want +got):\n%s", d)
	}
	code, out, stderr = runBin(t, "replay", "--json", dir)
	if code != exitUnreadable {
		t.Errorf("replay: exit %d, stderr %s", code, stderr)
	}
	if d := cmp.Diff(want, paths(out)); d != "" {
		t.Errorf("replay (-want +got):\n%s", d)
	}
	cmd, u, _ := startView(t, nil, dir)
	defer cmd.Process.Kill()
	resp, err := http.Get(u.String() + "api/bundles")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Bundles []struct{ Path, Status, SuiteStatus string }
	}
	err = json.NewDecoder(resp.Body).Decode(&c)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got, suite []string
	for _, b := range c.Bundles {
		got = append(got, b.Path)
		suite = append(suite, b.SuiteStatus)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("view (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"passed", "", "", ""}, suite); d != "" {
		t.Errorf("view's suite statuses (-want +got):\n%s", d)
	}
}

// TestViewMissingPath: a path that does not exist is exit 3 in view, as in
// replay and index.
func TestViewMissingPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, verb := range []string{"view", "index", "replay"} {
		code, _, stderr := runBin(t, verb, missing)
		if code != exitUnreadable || !strings.Contains(stderr, missing) || !strings.Contains(stderr, "no such file or directory") {
			t.Errorf("%s %s: exit %d, stderr %q; want %d naming the path", verb, missing, code, stderr, exitUnreadable)
		}
	}
}

func TestViewUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"view"}, "at least one BUNDLE or DIR"},
		{[]string{"view", t.TempDir()}, "no *.zst bundles"},
		{[]string{"view", "--listen", "127.0.0.1:notaport", "."}, "--listen"},
	}
	for _, tc := range tests {
		code, _, stderr := runBin(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// TestViewFollowsTheFiles is an outside tester's report, replayed against
// the binary: a running `wireproof view DIR` answers from the bundle file as
// it is now. Damaged in place after its page was read, the bundle is 422
// and listed damaged, not passed; removed, it is 404 and no longer listed;
// a bundle added to DIR since is listed.
func TestViewFollowsTheFiles(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	intact, err := os.ReadFile(passingBundle(t, src))
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.zst")
	if err := os.WriteFile(good, intact, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, u, _ := startView(t, nil, dir)
	defer cmd.Process.Signal(syscall.SIGINT)
	code := func(path string) int {
		t.Helper()
		resp, err := http.Get(u.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	type answer struct {
		Listed                string // the corpus row's status, "" when not listed
		Bundle, Events, Event int
	}
	ask := func() answer {
		t.Helper()
		a := answer{Bundle: code("api/bundle/good"), Events: code("api/bundle/good/events?limit=1"), Event: code("api/bundle/good/event/50")}
		for _, b := range viewCorpus(t, u).Bundles {
			if b.Name == "good" {
				a.Listed = b.Status
			}
		}
		return a
	}
	if d := cmp.Diff(answer{"passed", 200, 200, 200}, ask()); d != "" {
		t.Fatalf("intact (-want +got):\n%s", d)
	}
	b := bytes.Clone(intact)
	b[len(b)/2] ^= 1
	if err := os.WriteFile(good, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(answer{"damaged", 422, 422, 422}, ask()); d != "" {
		t.Errorf("damaged in place (-want +got):\n%s", d)
	}
	if err := os.Remove(good); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(answer{"", 404, 404, 404}, ask()); d != "" {
		t.Errorf("removed (-want +got):\n%s", d)
	}
	if err := os.WriteFile(filepath.Join(dir, "added.zst"), intact, 0o644); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range viewCorpus(t, u).Bundles {
		names = append(names, b.Name+" "+b.Status)
	}
	if d := cmp.Diff([]string{"added passed"}, names); d != "" {
		t.Errorf("a bundle added since the viewer started (-want +got):\n%s", d)
	}
}
