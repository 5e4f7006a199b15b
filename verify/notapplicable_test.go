package verify_test

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
)

// TestSuiteNotApplicable: a suite whose runs' scenario does not apply to
// the provider (native, twice, with the real Codex CLI) drives nothing,
// lists each run as not-applicable in results.json with the child's exit
// code 8, does not count them as failed, and exits 8: nothing was
// verified.
func TestSuiteNotApplicable(t *testing.T) {
	cli := testkit.CodexCLI(t, "..")
	out := filepath.Join(t.TempDir(), "evidence")
	cmd := exec.Command(wireproofBin, "verify", "--provider", "codex", "--provider-cli", cli, "--scenario", "native", "--repeat", "2", "--out", out)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 8 {
		t.Fatalf("wireproof verify: %v, want exit status 8\n%s", err, stdout.String())
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
	want := []row{{"native", "not-applicable", 8}, {"native", "not-applicable", 8}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results.json (-want +got):\n%s", diff)
	}
	if s := stdout.String(); !strings.Contains(s, "2 run(s): 0 passed, 0 not passed, 2 not applicable") {
		t.Errorf("the suite's summary:\n%s", s)
	}
}
