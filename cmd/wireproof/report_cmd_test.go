package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyBundle copies a bundle into a fresh directory, so the default output
// (beside the bundle) does not land in the source tree.
func copyBundle(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReportCommand(t *testing.T) {
	failing := copyBundle(t, golden+"/live/idle-duplicate-notification.zst")
	trunc := copyBundle(t, golden+"/idle-truncated.zst")
	explicit := filepath.Join(t.TempDir(), "out.html")
	tests := []struct {
		name    string
		args    []string
		code    int
		out     string // the report written, "" for none
		stderr  string
		content string // the report must contain
	}{
		{"default output beside the bundle", []string{"report", failing}, exitOK, strings.TrimSuffix(failing, ".zst") + ".html", "", `<tr id="seq-138" class="fail">`},
		{"-o", []string{"report", "-o", explicit, failing}, exitOK, explicit, "", "single-notification"},
		{"truncated", []string{"report", trunc}, exitOK, strings.TrimSuffix(trunc, ".zst") + ".html", "truncated", `id="truncated"`},
		{"unreadable", []string{"report", "-o", explicit + ".bad", notABundle(t)}, exitUnreadable, "", "not a wireproof bundle", ""},
		{"missing", []string{"report", filepath.Join(t.TempDir(), "missing.zst")}, exitUnreadable, "", "no such file", ""},
		{"no bundle", []string{"report"}, exitUsage, "", "accepts 1 arg", ""},
		{"two bundles", []string{"report", failing, trunc}, exitUsage, "", "accepts 1 arg", ""},
		{"output is the bundle", []string{"report", "-o", failing, failing}, exitOutput, "", "does not write over a bundle", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q: %s", tc.stderr, stderr)
			}
			if tc.out == "" {
				if stdout != "" {
					t.Errorf("stdout %q, want nothing", stdout)
				}
				return
			}
			if strings.TrimSpace(stdout) != tc.out {
				t.Errorf("stdout %q, want the report's path %q", stdout, tc.out)
			}
			html, err := os.ReadFile(tc.out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(html), tc.content) {
				t.Errorf("the report lacks %q", tc.content)
			}
		})
	}
}
