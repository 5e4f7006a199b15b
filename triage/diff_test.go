package triage

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/internal/testkit"
)

const (
	liveDir       = "../fixtures/golden/live/"
	idlePass      = liveDir + "idle.zst"
	idlePass2     = "testdata/diff/idle-pass-2.zst" // another passing idle run: other ids, ports, secret
	idleDuplicate = liveDir + "idle-duplicate-notification.zst"
	activePass    = liveDir + "active.zst"
	idleKilled    = liveDir + "idle-server-killed.zst"
)

// diffSummary is what a case asserts besides the goldens.
type diffSummary struct {
	Same       bool
	Header     []string // fields that differ
	StatusA    string
	StatusB    string
	Divergence *StoryHunk
	Transient  int
}

func summarize(r *DiffResult) diffSummary {
	s := diffSummary{Same: r.Same, StatusA: string(r.A.Verdict.Status), StatusB: string(r.B.Verdict.Status), Transient: len(r.Transient)}
	for _, f := range r.Header {
		s.Header = append(s.Header, f.Field)
	}
	if r.Divergence != nil {
		h := r.Divergence.StoryHunk
		s.Divergence = &h
	}
	return s
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want diffSummary
	}{
		{
			name: "idle-vs-idle",
			a:    idlePass, b: idlePass2,
			// Ids, ports and the secret differ (and B was recorded by
			// wireproof verify from a dirty tree); the story does not. B saw
			// fewer states early on and later (poll timing): transient stretches.
			want: diffSummary{Same: true, Header: []string{"revision", "dirty", "option port", "option scriptedProvider", "option serialization", "option timeout"}, StatusA: "passed", StatusB: "passed", Transient: 2},
		},
		{
			name: "idle-vs-duplicate-notification",
			a:    idlePass, b: idleDuplicate,
			// The stories part where B's continuation run sees a second
			// notification turn item (seq 96), which A never has.
			want: diffSummary{Header: []string{"option fault", "option port"}, StatusA: "passed", StatusB: "failed", Transient: 0,
				Divergence: &StoryHunk{AIndex: 4, AEnd: 8, BIndex: 4, BEnd: 8, ASeq: 107, BSeq: 96}},
		},
		{
			name: "idle-vs-active",
			a:    idlePass, b: activePass,
			// The prompts differ from the launch on.
			want: diffSummary{Header: []string{"scenario", "option port"}, StatusA: "passed", StatusB: "passed", Transient: 0,
				Divergence: &StoryHunk{AIndex: 0, AEnd: 8, BIndex: 0, BEnd: 6, ASeq: 30, BSeq: 40}},
		},
		{
			name: "idle-vs-server-killed",
			a:    idlePass, b: idleKilled,
			// B's story ends after the launch: the server died.
			want: diffSummary{Header: []string{"option fault", "option port"}, StatusA: "passed", StatusB: "failed",
				Divergence: &StoryHunk{AIndex: 1, AEnd: 8, BIndex: 1, BEnd: 1, ASeq: 53, BSeq: 38}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Diff(context.Background(), tt.a, tt.b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, summarize(r)); d != "" {
				t.Errorf("summary mismatch (-want +got):\n%s", d)
			}
			var text, js bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			testkit.Golden(t, filepath.Join("testdata", "diff", tt.name+".golden"), text.Bytes())
			testkit.Golden(t, filepath.Join("testdata", "diff", tt.name+".json.golden"), js.Bytes())
		})
	}
}

// TestDiffDeterministic: the same bundles give byte-identical output.
func TestDiffDeterministic(t *testing.T) {
	var outs [2]bytes.Buffer
	for i := range outs {
		r, err := Diff(context.Background(), idlePass, idleDuplicate, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&outs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(outs[0].String(), outs[1].String()); d != "" {
		t.Errorf("two diffs of the same bundles differ (-first +second):\n%s", d)
	}
}

func TestDiffUnreadable(t *testing.T) {
	dir := t.TempDir()
	notBundle := filepath.Join(dir, "not-a-bundle.zst")
	if err := os.WriteFile(notBundle, []byte("this is not zstd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(idlePass)
	if err != nil {
		t.Fatal(err)
	}
	cutInHeader := filepath.Join(dir, "cut-in-header.zst")
	if err := os.WriteFile(cutInHeader, raw[:40], 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.zst")
	tests := []struct {
		name, a, b string
		wantPath   string
	}{
		{"missing A", missing, idlePass, missing},
		{"missing B", idlePass, missing, missing},
		{"not a bundle", idlePass, notBundle, notBundle},
		{"cut in its header", cutInHeader, idlePass, cutInHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Diff(context.Background(), tt.a, tt.b, nil)
			var be *BundleError
			if !errors.As(err, &be) {
				t.Fatalf("Diff error = %v, want a *BundleError", err)
			}
			if be.Path != tt.wantPath {
				t.Errorf("BundleError.Path = %q, want %q", be.Path, tt.wantPath)
			}
		})
	}
	if _, err := Diff(context.Background(), missing, idlePass, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing bundle: error %v does not wrap fs.ErrNotExist", err)
	}
}

func TestDiffCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Diff(ctx, idlePass, idlePass2, nil)
	var be *BundleError
	if !errors.Is(err, context.Canceled) || errors.As(err, &be) {
		t.Fatalf("Diff with a cancelled context = %v, want context.Canceled and no BundleError", err)
	}
}
