package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoVerbWritesOverABundle: export, report, index and replay --junit
// refuse an output that is their input bundle or any other bundle, with exit
// 6 naming the path and the bundle left as it was; --force writes it; an
// output that is not a bundle is replaced as before.
func TestNoVerbWritesOverABundle(t *testing.T) {
	dir := t.TempDir()
	in := passingBundle(t, dir)
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.zst")
	reset := func() {
		t.Helper()
		if err := os.WriteFile(other, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.zst")
	if err := os.Link(in, link); err != nil {
		t.Fatal(err)
	}
	verbs := []func(out string) []string{
		func(out string) []string { return []string{"export", "-o", out, in} },
		func(out string) []string { return []string{"export", "--har", out, in} },
		func(out string) []string { return []string{"report", "-o", out, in} },
		func(out string) []string { return []string{"index", "-o", out, in} },
		func(out string) []string { return []string{"replay", "--junit", out, in} },
	}
	for _, verb := range verbs {
		for _, out := range []string{in, link, other} {
			reset()
			args := verb(out)
			code, stdout, stderr := runWireproof(t, args...)
			if code != exitOutput || !strings.Contains(stderr, out) || !strings.Contains(stderr, "does not write over a bundle") {
				t.Errorf("wireproof %s: exit %d, want %d naming %s\n%s%s", strings.Join(args, " "), code, exitOutput, out, stdout, stderr)
			}
			for _, p := range []string{in, other} {
				if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, data) {
					t.Fatalf("wireproof %s changed %s (%v)", strings.Join(args, " "), p, err)
				}
			}
		}
		reset()
		args := append(verb(other), "--force")
		if code, stdout, stderr := runWireproof(t, args...); code != 0 {
			t.Errorf("wireproof %s: exit %d, want 0\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		} else if b, _ := os.ReadFile(other); bytes.Equal(b, data) {
			t.Errorf("wireproof %s: %s was not written", strings.Join(args, " "), other)
		}
		plain := filepath.Join(dir, "old.out")
		if err := os.WriteFile(plain, []byte("an old output\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, stdout, stderr := runWireproof(t, verb(plain)...); code != 0 {
			t.Errorf("wireproof %s over a file that is not a bundle: exit %d, want 0\n%s%s", strings.Join(verb(plain), " "), code, stdout, stderr)
		}
	}
}
