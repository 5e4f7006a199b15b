package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// update rewrites golden files under testdata/ instead of comparing with them.
// It is the package's one -update flag: other test files use it too.
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// wireproofBin is the wireproof binary, built once by TestMain, for tests that
// check exit codes and output streams of the real program.
var wireproofBin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "wireproof-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wireproofBin = filepath.Join(dir, "wireproof")
	if out, err := exec.Command("go", "build", "-o", wireproofBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
