package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiffCommand runs the real binary from the triage package's directory, so
// its output can be compared with the goldens triage's own tests keep.
func TestDiffCommand(t *testing.T) {
	const (
		idle      = "../fixtures/golden/live/idle.zst"
		idle2     = "testdata/diff/idle-pass-2.zst"
		duplicate = "../fixtures/golden/live/idle-duplicate-notification.zst"
		active    = "../fixtures/golden/live/active.zst"
	)
	notBundle := filepath.Join(t.TempDir(), "not-a-bundle.zst")
	if err := os.WriteFile(notBundle, []byte("plain text"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		golden     string // triage/testdata/diff/<golden> is the expected stdout
		wantStderr string // a substring of stderr
	}{
		{name: "same story", args: []string{idle, idle2}, wantCode: 0, golden: "idle-vs-idle.golden"},
		{name: "duplicate notification", args: []string{idle, duplicate}, wantCode: 1, golden: "idle-vs-duplicate-notification.golden"},
		{name: "other scenario", args: []string{idle, active}, wantCode: 1, golden: "idle-vs-active.golden"},
		{name: "json", args: []string{"--json", idle, duplicate}, wantCode: 1, golden: "idle-vs-duplicate-notification.json.golden"},
		{name: "missing bundle", args: []string{idle, "testdata/diff/no-such.zst"}, wantCode: 3, wantStderr: "no-such.zst"},
		{name: "not a bundle", args: []string{notBundle, idle}, wantCode: 3, wantStderr: "not-a-bundle.zst"},
		{name: "one argument", args: []string{idle}, wantCode: 2, wantStderr: "diff takes two bundles"},
		{name: "three arguments", args: []string{idle, idle, idle}, wantCode: 2, wantStderr: "got 3 argument(s)"},
		{name: "bad context", args: []string{"--context", "0", idle, idle}, wantCode: 2, wantStderr: "--context must be at least 1"},
		{name: "unknown flag", args: []string{"--nope", idle, idle}, wantCode: 2, wantStderr: "--nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(wireproofBin, append([]string{"diff"}, tt.args...)...)
			cmd.Dir = filepath.Join("..", "..", "triage")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			code := exitStatus(t, cmd.Run())
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if tt.wantStderr != "" && !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not mention %q", stderr.String(), tt.wantStderr)
			}
			if tt.golden == "" {
				return
			}
			want, err := os.ReadFile(filepath.Join(cmd.Dir, "testdata", "diff", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), stdout.String()); d != "" {
				t.Errorf("stdout differs from triage/testdata/diff/%s (-want +got):\n%s", tt.golden, d)
			}
			if strings.HasSuffix(tt.golden, ".json.golden") && !json.Valid(stdout.Bytes()) {
				t.Errorf("--json output is not valid JSON")
			}
		})
	}
}
