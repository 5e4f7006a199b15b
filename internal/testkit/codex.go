package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// CodexCLI is the real Codex CLI's native binary a test runs: the one
// EnvCodexCLI names (CI: the pinned one .ci/run installs), else the one
// interop/codex-cli's node_modules holds under root (the repository's root,
// relative to the test's package directory). Without one the test skips,
// or fails under EnvNodeRequired.
func CodexCLI(t testing.TB, root string) string {
	t.Helper()
	if p := os.Getenv(EnvCodexCLI); p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			t.Fatalf("%s=%s is not the Codex CLI: %v", EnvCodexCLI, p, err)
		}
		return p
	}
	p, _ := filepath.Abs(filepath.Join(root, "interop/codex-cli/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"))
	if _, err := os.Stat(p); err != nil {
		Missing(t, EnvNodeRequired, "skipping the real Codex CLI tests: set "+EnvCodexCLI+
			" to its native binary, or install the pinned one (cd interop/codex-cli && npm ci)")
	}
	return p
}
