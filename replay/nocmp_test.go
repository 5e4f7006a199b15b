package replay_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestVerdictPathHasNoGoCmp: no package a verdict is computed or compared in
// links go-cmp, whose text is deliberately different in every process (a
// verdict must be byte-identical live and in every replay); tests may use
// it.
func TestVerdictPathHasNoGoCmp(t *testing.T) {
	const mod = "github.com/wireproof/wireproof/"
	for _, pkg := range []string{"replay", "assert", "protocol", "delivery", "verify"} {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, d := range strings.Fields(string(out)) {
			if strings.HasPrefix(d, "github.com/google/go-cmp") {
				t.Errorf("%s links %s", pkg, d)
			}
		}
	}
}
