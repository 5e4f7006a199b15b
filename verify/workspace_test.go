package verify

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestReadRepoState(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@localhost"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if st := readRepoState(ctx, dir); st.Revision != "" || st.Dirty {
		t.Fatalf("outside a repository: %+v, want nothing", st)
	}
	git("init", "-q")
	file := filepath.Join(dir, "data.bin")
	if err := os.WriteFile(file, []byte("small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "data.bin")
	git("commit", "-qm", "initial")

	clean := readRepoState(ctx, dir)
	if len(clean.Revision) != 40 || clean.Dirty || clean.Patch != nil {
		t.Errorf("clean tree: revision %q dirty %v patch %d bytes", clean.Revision, clean.Dirty, len(clean.Patch))
	}

	if err := os.WriteFile(file, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	small := readRepoState(ctx, dir)
	if !small.Dirty || small.PatchTruncated || len(small.Patch) == 0 {
		t.Errorf("small change: dirty %v truncated %v patch %d bytes", small.Dirty, small.PatchTruncated, len(small.Patch))
	}

	// A large binary change: the patch is capped, its whole size counted.
	big := make([]byte, 2*maxPatch)
	rand.Read(big)
	if err := os.WriteFile(file, big, 0o644); err != nil {
		t.Fatal(err)
	}
	large := readRepoState(ctx, dir)
	if !large.PatchTruncated || len(large.Patch) != maxPatch || large.PatchSize <= maxPatch {
		t.Errorf("large change: truncated %v, kept %d bytes of %d, want %d kept of more", large.PatchTruncated, len(large.Patch), large.PatchSize, maxPatch)
	}
}
