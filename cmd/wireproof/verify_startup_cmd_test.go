package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyPrintsDeadServersOutput: a --server-cmd that dies at startup
// fails the run, and the console shows its last lines (here its stderr), so
// the reason is read without opening the bundle.
func TestVerifyPrintsDeadServersOutput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCLI(t, "verify", "--scenario", "idle", "--server-cmd", "sh -c 'echo listen tcp 127.0.0.1: address already in use >&2; exit 3' #", "--out", out)
	if code != exitCheckFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitCheckFailed, stdout, stderr)
	}
	for _, want := range []string{"server-alive", "the server did not come up; its last output (1 line(s)):\n    | listen tcp 127.0.0.1: address already in use\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}
