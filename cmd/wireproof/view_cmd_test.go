package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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

func TestViewUsageErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"view"}, "at least one BUNDLE or DIR"},
		{[]string{"view", missing}, missing + ": no such file or directory"},
		{[]string{"view", t.TempDir()}, "no bundles"},
		{[]string{"view", "--listen", "127.0.0.1:notaport", "."}, "--listen"},
	}
	for _, tc := range tests {
		code, _, stderr := runBin(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
