package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputErrorsHaveTheirOwnExitCode: an output that cannot be written is
// not a failed check (1): it exits 4 and names the path the user gave, never
// the temporary file an atomic write goes through.
func TestOutputErrorsHaveTheirOwnExitCode(t *testing.T) {
	golden := filepath.Join("..", "..", "fixtures", "golden", "live", "idle.zst")
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	for _, tc := range []struct {
		name string
		args []string
		path string
	}{
		{"replay junit", []string{"replay", "--junit", filepath.Join(missing, "j.xml"), golden}, filepath.Join(missing, "j.xml")},
		{"verify out", []string{"verify", "--scenario", "idle", "--out", "/proc/x"}, "/proc/x"},
		{"suite out", []string{"verify", "--out", "/proc/x"}, "/proc/x"},
		{"report", []string{"report", "-o", filepath.Join(missing, "r.html"), golden}, filepath.Join(missing, "r.html")},
		{"export", []string{"export", "--har", filepath.Join(missing, "h.har"), golden}, filepath.Join(missing, "h.har")},
		{"record", []string{"record", "--upstream", "http://127.0.0.1:9", "-o", filepath.Join(missing, "x.zst"), "--", "true"}, filepath.Join(missing, "x.zst")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runBin(t, tc.args...)
			if code != exitOutput {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitOutput, stderr)
			}
			want := "wireproof: cannot write " + tc.path + ": "
			if !strings.HasPrefix(stderr, want) {
				t.Errorf("stderr = %q, want it to begin %q", stderr, want)
			}
			if strings.Count(stderr, tc.path) != 1 || strings.Contains(stderr, "/.") {
				t.Errorf("stderr names another path than the user's: %q", stderr)
			}
		})
	}
}

func TestVerifyEmptyServerCmdIsAUsageError(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, v := range []string{"", "  "} {
		code, _, stderr := runCLI(t, "verify", "--scenario", "idle", "--server-cmd", v, "--out", out)
		if code != exitUsage || !strings.Contains(stderr, "--server-cmd") {
			t.Errorf("--server-cmd %q: exit %d, stderr %q; want exit %d naming the flag", v, code, stderr, exitUsage)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a usage error created the output directory: %v", err)
	}
}
