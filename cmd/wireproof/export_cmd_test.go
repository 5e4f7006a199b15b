package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBin runs the wireproof binary TestMain built and returns its exit code,
// stdout and stderr.
func runBin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runBinEnv(t, nil, args...)
}

// runBinEnv is runBin with extra environment (NAME=VALUE) on top of the
// test's own.
func runBinEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(wireproofBin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := exitStatus(t, cmd.Run())
	return code, stdout.String(), stderr.String()
}

// notABundle writes a file that is not a bundle and returns its path.
func notABundle(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bad.zst")
	if err := os.WriteFile(p, []byte("not a bundle"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExportHAR(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run.har")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // text stderr must contain
		wrote  bool
	}{
		{"live bundle", []string{"export", "--har", out, golden + "/live/idle-duplicate-notification.zst"}, exitOK, "", true},
		{"truncated bundle", []string{"export", "--har", out, golden + "/idle-truncated.zst"}, exitOK, "truncated", true},
		{"unreadable", []string{"export", "--har", out, notABundle(t)}, exitUnreadable, "not a wireproof bundle", false},
		{"missing", []string{"export", "--har", out, filepath.Join(dir, "missing.zst")}, exitUnreadable, "no such file", false},
		{"no --har", []string{"export", golden + "/idle.zst"}, exitUsage, "--har", false},
		{"no bundle", []string{"export", "--har", out}, exitUsage, "accepts 1 arg", false},
		{"unknown flag", []string{"export", "--zip", out, golden + "/idle.zst"}, exitUsage, "unknown flag", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(out)
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q: %s", tc.stderr, stderr)
			}
			raw, err := os.ReadFile(out)
			if !tc.wrote {
				if err == nil {
					t.Errorf("%s was written", out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSpace(stdout) != out {
				t.Errorf("stdout %q, want the HAR's path %q", stdout, out)
			}
			var doc struct {
				Log struct {
					Version string
					Creator struct{ Name string }
					Entries []json.RawMessage
				}
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatalf("the HAR is not JSON: %v", err)
			}
			if doc.Log.Version != "1.2" || doc.Log.Creator.Name != "wireproof" || len(doc.Log.Entries) == 0 {
				t.Errorf("HAR log: version %q, creator %q, %d entries", doc.Log.Version, doc.Log.Creator.Name, len(doc.Log.Entries))
			}
		})
	}
}
