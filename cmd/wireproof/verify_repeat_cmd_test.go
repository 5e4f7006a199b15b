package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireproof/wireproof/assert"
)

// TestVerifyHugeRepeatStartsAndStopsOnInterrupt: a suite of a billion
// iterations starts its first run (the output check reads the directory,
// not a billion names) and SIGINT, sent once the second has begun, ends it
// with exit 130.
func TestVerifyHugeRepeatStartsAndStopsOnInterrupt(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(wireproofBin, "verify", "--scenario", "idle", "--repeat", "1000000000", "--out", out)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A hang guard, not a measure: the old check never got to a first run.
	guard := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer guard.Stop()
	var seen strings.Builder
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "Run 2/1000000000: idle (iteration 2/1000000000)") {
			break // the first run is over, the second begun
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
	}
	code := exitStatus(t, cmd.Wait())
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, seen.String(), stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Iteration int
		Status    assert.Status
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) < 1 || entries[0].Status != assert.StatusPassed {
		t.Errorf("results.json: %s; want the first run passed", b)
	}
}
