package verify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/wireproof/wireproof/internal/credscan"
)

// workspace is the disposable state of one run: the server's home and the git
// project the agent works in. Both live in one temporary directory that is
// removed when the run ends; the evidence is in the bundle.
type workspace struct {
	dir     string
	home    string
	project string
}

// newWorkspace creates the workspace in a new temporary directory, or, when
// keepIn is set, in that directory (created), so it outlives the run. The
// temporary directory is named after this process (see runDirPattern), and
// those left behind by dead wireproof processes are removed first.
func newWorkspace(ctx context.Context, keepIn string) (*workspace, error) {
	dir := keepIn
	var err error
	if dir == "" {
		removeStaleRunDirs(os.TempDir())
		dir, err = os.MkdirTemp("", runDirPattern())
	} else if dir, err = filepath.Abs(dir); err == nil {
		// Absolute: the server runs in it, and reads its home and settings from there.
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return nil, err
	}
	w := &workspace{dir: dir, home: filepath.Join(dir, "home"), project: filepath.Join(dir, "project")}
	if err := os.MkdirAll(w.project, 0o755); err != nil {
		w.remove()
		return nil, err
	}
	for _, args := range [][]string{
		{"init", "-q", w.project},
		{"-C", w.project, "-c", "user.name=Verifier", "-c", "user.email=verifier@localhost", "commit", "--allow-empty", "-qm", "initial"},
	} {
		if out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
			w.remove()
			return nil, fmt.Errorf("creating the disposable project: git %s: %v: %s", args[0], err, bytes.TrimSpace(out))
		}
	}
	return w, nil
}

func (w *workspace) remove() { os.RemoveAll(w.dir) }

// repoState is what the manifest says about the working directory's repository.
type repoState struct {
	Revision       string
	Dirty          bool
	Status         string
	Patch          []byte
	PatchTruncated bool  // the patch was longer than maxPatch
	PatchSize      int64 // its whole size when truncated
}

// maxPatch caps the working-tree patch kept as an artifact: a dirty tree with
// large binary files must not make the bundle (or the driver's memory) grow
// without bound.
const maxPatch = 8 << 20

// readRepoState reads the revision, dirty state and (with keepPatch) the
// patch of the repository containing dir, if it is one; outside a repository
// it returns a zero state. A patch kept has every credential-looking string
// replaced by [REDACTED] (credscan) before the recorder redacts it as a body.
func readRepoState(ctx context.Context, dir string, keepPatch bool) repoState {
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		return cmd.Output()
	}
	rev, err := git("rev-parse", "HEAD")
	if err != nil {
		return repoState{}
	}
	st := repoState{Revision: strings.TrimSpace(string(rev))}
	if status, err := git("status", "--porcelain"); err == nil {
		st.Status = string(status)
		st.Dirty = len(bytes.TrimSpace(status)) > 0
	}
	if st.Dirty && keepPatch {
		st.Patch, st.PatchSize, st.PatchTruncated = readPatch(ctx, dir)
		st.Patch = redactPatch(st.Patch)
	}
	return st
}

// redactPatch replaces what looks like a credential in the text lines of a
// patch (credscan). The base85 lines of a binary hunk are left as they are:
// they are not text a credential could be read from, and any long run of
// them looks like a high-entropy token.
func redactPatch(patch []byte) []byte {
	var out []byte
	binary := false
	for line := range bytes.Lines(patch) {
		switch {
		case bytes.HasPrefix(line, []byte("diff --git ")):
			binary = false
		case bytes.HasPrefix(line, []byte("GIT binary patch")):
			binary = true
		}
		if !binary {
			line = credscan.Redact(line)
		}
		out = append(out, line...)
	}
	return out
}

// readPatch reads `git diff --binary HEAD` up to maxPatch bytes and counts the
// rest without keeping it.
func readPatch(ctx context.Context, dir string) (patch []byte, size int64, truncated bool) {
	cmd := exec.CommandContext(ctx, "git", "diff", "--binary", "HEAD")
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, false
	}
	if err := cmd.Start(); err != nil {
		return nil, 0, false
	}
	patch, _ = io.ReadAll(io.LimitReader(out, maxPatch))
	rest, _ := io.Copy(io.Discard, out)
	cmd.Wait()
	return patch, int64(len(patch)) + rest, rest > 0
}
