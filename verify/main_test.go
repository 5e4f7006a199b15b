package verify_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

// wireproofBin is the wireproof binary built once for these tests: the embedded
// fixture server and suite children are real child processes of it.
var wireproofBin string

func TestMain(m *testing.M) {
	testkit.Main(m, &testkit.Options{Setup: func() (func(), error) {
		dir, err := os.MkdirTemp("", "wireproof-verify-test-")
		if err != nil {
			return nil, err
		}
		wireproofBin = filepath.Join(dir, "wireproof")
		build := exec.Command("go", "build", "-o", wireproofBin, "../cmd/wireproof")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("building wireproof: %w", err)
		}
		return func() { os.RemoveAll(dir) }, nil
	}})
}
