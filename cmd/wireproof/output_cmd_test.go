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

// TestOutputOverDirectory: report -o, export -o and index -o given a
// directory exit 6 saying it is one, never naming the temporary file their
// write goes through, and leave nothing beside it.
func TestOutputOverDirectory(t *testing.T) {
	golden := filepath.Join("..", "..", "fixtures", "golden", "live", "idle.zst")
	dir := t.TempDir()
	out := filepath.Join(dir, "out.html")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", "-o", out, golden},
		{"export", "-o", out, golden},
		{"index", "-o", out, golden},
	} {
		code, _, stderr := runCLI(t, args...)
		if want := "wireproof: cannot write " + out + ": it is a directory\n"; code != exitOutput || stderr != want {
			t.Errorf("wireproof %s: exit %d, stderr %q; want %d and %q", strings.Join(args, " "), code, stderr, exitOutput, want)
		}
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("files left beside the directory: %v", es)
	}
}

// TestOutputThroughSymlink: an -o that is a symbolic link to a file (as
// /dev/stdout is, to /proc/self/fd/1, when stdout is redirected to a file)
// writes the file it points to and leaves the link a link, never renaming a
// regular file over it.
func TestOutputThroughSymlink(t *testing.T) {
	golden := filepath.Join("..", "..", "fixtures", "golden", "live", "idle.zst")
	dir := t.TempDir()
	target := filepath.Join(dir, "real.har")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.har")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "export", "-o", link, golden); code != exitOK {
		t.Fatalf("export -o a link: exit %d\n%s", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), `"creator"`) {
		t.Errorf("the link's target holds %.100q, not the HAR", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 2 {
		t.Errorf("files left beside the output: %v", es)
	}
}
