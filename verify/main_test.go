package verify_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// wireproofBin is the wireproof binary built once for these tests: the embedded
// fixture server and suite children are real child processes of it.
var wireproofBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wireproof-verify-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wireproofBin = filepath.Join(dir, "wireproof")
	build := exec.Command("go", "build", "-o", wireproofBin, "../cmd/wireproof")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building wireproof:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
