package bundle

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestGoldenCorporaVerify: the committed golden corpora (most written in
// format 1, before format 2) read and verify (trailer and digest), except the
// ones cut on purpose, which read as truncated; none is damaged.
func TestGoldenCorporaVerify(t *testing.T) {
	var paths []string
	for _, g := range []string{"../fixtures/golden/*.zst", "../fixtures/golden/live/*.zst", "testdata/*.zst"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 50 {
		t.Fatalf("found %d bundles, expected the golden corpora", len(paths))
	}
	for _, p := range paths {
		cut := strings.Contains(p, "truncated") || strings.Contains(p, "unclosed")
		r, err := Open(p, nil)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		for _, err = range r.All() {
			if err != nil {
				break
			}
		}
		switch {
		case err != nil:
			t.Errorf("%s: %v", p, err)
		case cut && !r.Truncated():
			t.Errorf("%s: not truncated", p)
		case !cut && (r.Truncated() || !strings.HasPrefix(r.Digest(), "sha256:")):
			t.Errorf("%s: truncated %v (%s), digest %q: want verified", p, r.Truncated(), r.TruncatedReason(), r.Digest())
		}
		r.Close()
	}
}
