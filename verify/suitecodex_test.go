package verify_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
)

// TestSuiteNativeOnCodex: a suite of native, twice, with the real Codex
// CLI runs each in its own child, as every suite does: both are judged
// (native applies to Codex: the server delivers the background command's
// completion), pass, are listed passed in results.json with the child's
// exit code 0, and the suite exits 0. (How a suite lists a not-applicable
// child, exit 8, is decided in runChild from the child's verdict; no
// scenario of wireproof's registers such a run today.)
func TestSuiteNativeOnCodex(t *testing.T) {
	cli := testkit.CodexCLI(t, "..")
	out := filepath.Join(t.TempDir(), "evidence")
	cmd := exec.Command(wireproofBin, "verify", "--provider", "codex", "--provider-cli", cli, "--scenario", "native", "--repeat", "2", "--out", out)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("wireproof verify: %v, want exit status 0\n%s", err, stdout.String())
	}
	entries := readResults(t, out)
	type row struct {
		Scenario, Status string
		ExitCode         int
	}
	var got []row
	for _, e := range entries {
		got = append(got, row{string(e.Scenario), string(e.Status), e.ExitCode})
	}
	want := []row{{"native", "passed", 0}, {"native", "passed", 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results.json (-want +got):\n%s", diff)
	}
	if s := stdout.String(); !strings.Contains(s, "2 run(s): 2 passed, 0 not passed") {
		t.Errorf("the suite's summary:\n%s", s)
	}
}
