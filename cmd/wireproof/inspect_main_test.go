package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

// wireproofBin is the wireproof binary, built once by TestMain, for tests that
// check exit codes and output streams of the real program.
var wireproofBin string

func TestMain(m *testing.M) {
	testkit.Main(m, &testkit.Options{
		// The commands `wireproof record -- CMD` runs in the tests: this
		// test binary in one of these modes.
		Helpers: map[string]func() int{
			"record-client": recordClient,
			"stdio-echo":    stdioEcho,
			"jsonrpc-peer":  jsonRPCPeer,
			"codex-app":     codexApp,
			"t3-html":       t3HTML,
		},
		Setup: func() (func(), error) {
			dir, err := os.MkdirTemp("", "wireproof-test-")
			if err != nil {
				return nil, err
			}
			wireproofBin = filepath.Join(dir, "wireproof")
			if out, err := exec.Command("go", "build", "-o", wireproofBin, ".").CombinedOutput(); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("go build: %v\n%s", err, out)
			}
			return func() { os.RemoveAll(dir) }, nil
		},
	})
}
