package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVerifyRefusesAnExistingBundle: a local --out that already holds a
// bundle the runs would write is refused before anything starts, with exit 6
// (an output that is not written, as with s3://), naming the bundle; the
// bundle is left as it was and nothing is added beside it.
func TestVerifyRefusesAnExistingBundle(t *testing.T) {
	tests := []struct {
		name  string
		have  string // the bundle already in --out
		flags []string
	}{
		{"a single run", "idle-1.zst", []string{"--scenario", "idle"}},
		{"a repeated scenario, its last iteration", "idle-3.zst", []string{"--scenario", "idle", "--repeat", "3"}},
		{"every scenario", "nested-1.zst", []string{"--scenario", "all"}},
		{"a single run's iteration", "native-7.zst", []string{"--scenario", "native", "--iteration", "7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(out, tt.have), "evidence")
			code, stdout, stderr := runCLI(t, append([]string{"verify", "--out", out}, tt.flags...)...)
			want := "cannot write " + out + ": it already holds " + tt.have + ", and a bundle is never overwritten: choose another directory"
			if code != exitOutput || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q\nstdout:\n%s", code, stderr, exitOutput, want, stdout)
			}
			entries, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if diff := cmp.Diff([]string{tt.have}, names); diff != "" {
				t.Errorf("--out holds (-want +got):\n%s", diff)
			}
			if b, _ := os.ReadFile(filepath.Join(out, tt.have)); string(b) != "evidence" {
				t.Errorf("%s now holds %q", tt.have, b)
			}
		})
	}
}
