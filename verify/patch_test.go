package verify_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/verify"
)

// TestWorkingTreePatchOptIn: in a repository with uncommitted changes the
// bundle records that the tree is dirty, but keeps the diff only with
// KeepPatch, and then with the credential in it redacted.
func TestWorkingTreePatchOptIn(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@localhost"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	env := filepath.Join(repo, ".env")
	os.WriteFile(env, []byte("MODE=dev\n"), 0o644)
	git("add", ".env")
	git("commit", "-qm", "initial")
	const key = "sk-proj-Q7xVb2LmN9pK4wR8tY1zA6cD3fG5hJ0e"
	os.WriteFile(env, []byte("MODE=dev\nOPENAI_API_KEY="+key+"\n"), 0o644)

	for _, keep := range []bool{false, true} {
		res, err := verify.Run(context.Background(), verify.Options{Scenario: assert.ScenarioIdle, OutDir: t.TempDir(),
			RepoDir: repo, KeepPatch: keep, Timeout: 2 * time.Minute, Executable: wireproofBin})
		if err != nil {
			t.Fatal(err)
		}
		hdr, events := readBundle(t, res.Bundle)
		if res.Events != uint64(len(events))+1 {
			t.Errorf("verify counts %d events, the bundle holds %d and its header", res.Events, len(events))
		}
		if !hdr.Manifest.Dirty {
			t.Errorf("keep %v: the manifest does not say the tree is dirty", keep)
		}
		var patch *bundle.Event
		for i := range events {
			if events[i].Kind == bundle.KindArtifact && events[i].Name == "working-tree.patch" {
				patch = &events[i]
			}
		}
		switch {
		case !keep && patch != nil:
			t.Errorf("without KeepPatch the bundle holds the patch:\n%s", patch.Body.Data)
		case keep && (patch == nil || !bytes.Contains(patch.Body.Data, []byte("+OPENAI_API_KEY=[REDACTED]"))):
			t.Errorf("with KeepPatch the patch is missing or unredacted: %v", patch)
		}
		if raw := testkit.Decompress(t, res.Bundle); bytes.Contains(raw, []byte(key)) || bytes.Contains(raw, []byte(key[8:])) {
			t.Errorf("keep %v: the key is in the bundle", keep)
		}
	}
}
