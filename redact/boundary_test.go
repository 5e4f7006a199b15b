package redact

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReadersLinkNoCapture: the offline tools redact with this package, not
// with the recorder, so the viewer and triage (HAR, report) link neither the
// proxy nor the process supervisor (package record).
func TestReadersLinkNoCapture(t *testing.T) {
	const mod = "github.com/wireproof/wireproof/"
	for _, pkg := range []string{"view", "triage"} {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		found := false
		for _, d := range deps {
			switch d {
			case mod + "record":
				t.Errorf("%s links %s", pkg, d)
			case mod + "redact":
				found = true
			}
		}
		if !found {
			t.Errorf("%s does not link %sredact: the test lists the wrong packages", pkg, mod)
		}
	}
}
