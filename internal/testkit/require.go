package testkit

import (
	"os"
	"testing"
)

// The environment variables that make a missing requirement a failure
// instead of a skip. .ci/run installs a headless Chromium and Node.js with
// the pinned npm packages and sets them, so there a test that needs one
// runs or fails; on a developer's machine without them it skips and says
// why. (Object storage has its own, s3test.EnvRequired.)
const (
	// EnvBrowserRequired: the browser tests (view, triage's report
	// layout) need a headless Chromium.
	EnvBrowserRequired = "WIREPROOF_TEST_BROWSER_REQUIRED"
	// EnvNodeRequired: the tests that run Node.js clients (interop, the
	// DuckDB queries of docs/storage.md) need node and their node_modules.
	EnvNodeRequired = "WIREPROOF_TEST_NODE_REQUIRED"
	// EnvClaudeCLI is the path of the real Claude Code CLI the tests of
	// verify --provider-cli run (.ci/run installs the pinned one and sets
	// it): set, those tests run on it or fail; unset, they look for
	// interop/claude-cli's node_modules, and skip (fail under
	// EnvNodeRequired) without it.
	EnvClaudeCLI = "WIREPROOF_TEST_CLAUDE_CLI"
	// EnvCodexCLI is the path of the real Codex CLI (the native binary) the
	// model package's Codex tests run (.ci/run installs the pinned one of
	// interop/codex-cli and sets it): set, they run on it or fail; unset,
	// they look for interop/codex-cli's node_modules, and skip (fail under
	// EnvNodeRequired) without it.
	EnvCodexCLI = "WIREPROOF_TEST_CODEX_CLI"
	// EnvXMLLintRequired: the JUnit schema test (cmd/wireproof) validates
	// replay --junit output with xmllint (Debian's libxml2-utils).
	EnvXMLLintRequired = "WIREPROOF_TEST_XMLLINT_REQUIRED"
)

// Missing ends a test whose requirement is missing: it skips with msg, or,
// when the environment variable env is set, fails with msg and says why.
func Missing(t testing.TB, env, msg string) {
	t.Helper()
	if os.Getenv(env) != "" {
		t.Fatal(msg + "; " + env + " is set, so this is a failure, not a skip")
		return
	}
	t.Skip(msg)
}
