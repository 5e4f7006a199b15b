package verify

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	if st := readRepoState(ctx, dir, true); st.Revision != "" || st.Dirty {
		t.Fatalf("outside a repository: %+v, want nothing", st)
	}
	git("init", "-q")
	file := filepath.Join(dir, "data.bin")
	if err := os.WriteFile(file, []byte("small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "data.bin")
	git("commit", "-qm", "initial")

	clean := readRepoState(ctx, dir, true)
	if len(clean.Revision) != 40 || clean.Dirty || clean.Patch != nil {
		t.Errorf("clean tree: revision %q dirty %v patch %d bytes", clean.Revision, clean.Dirty, len(clean.Patch))
	}

	if err := os.WriteFile(file, []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	small := readRepoState(ctx, dir, true)
	if !small.Dirty || small.PatchTruncated || len(small.Patch) == 0 {
		t.Errorf("small change: dirty %v truncated %v patch %d bytes", small.Dirty, small.PatchTruncated, len(small.Patch))
	}

	// Off by default: the dirty state is recorded, the diff is not.
	if off := readRepoState(ctx, dir, false); !off.Dirty || off.Patch != nil || off.Status == "" {
		t.Errorf("without keepPatch: dirty %v patch %d bytes status %q", off.Dirty, len(off.Patch), off.Status)
	}
	// A kept patch has what looks like a credential replaced.
	const key = "sk-proj-Q7xVb2LmN9pK4wR8tY1zA6cD3fG5hJ0e"
	if err := os.WriteFile(file, []byte("OPENAI_API_KEY="+key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := readRepoState(ctx, dir, true)
	if strings.Contains(string(env.Patch), key) || !strings.Contains(string(env.Patch), "+OPENAI_API_KEY=[REDACTED]") {
		t.Errorf("the kept patch holds the key, or lost the line:\n%s", env.Patch)
	}

	// A large binary change: the patch is capped, its whole size counted.
	big := make([]byte, 2*maxPatch)
	rand.Read(big)
	if err := os.WriteFile(file, big, 0o644); err != nil {
		t.Fatal(err)
	}
	large := readRepoState(ctx, dir, true)
	if !large.PatchTruncated || len(large.Patch) != maxPatch || large.PatchSize <= maxPatch {
		t.Errorf("large change: truncated %v, kept %d bytes of %d, want %d kept of more", large.PatchTruncated, len(large.Patch), large.PatchSize, maxPatch)
	}
}
