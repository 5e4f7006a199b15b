package verify

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/provider/cliwrap"
)

// A run with Options.ProviderCLI puts the real Claude Code CLI behind the
// server's provider sessions. The server is given a `claude` that runs
// `wireproof provider wrap CLI ARGS` (first on its PATH and as the
// providers.claudeAgent.binaryPath setting, as for the scripted provider),
// which execs the real CLI and streams its stdio to the provider tap and its
// MCP requests through the recording proxy. The CLI's model is the scripted
// Messages API (package model), served on loopback behind a second recording
// proxy (connections "model-h1", ...): ANTHROPIC_BASE_URL names that proxy and
// ANTHROPIC_API_KEY is a random key of the run, which the recorder redacts in
// every spelling. The CLI's home is private to the run (cliwrap.EnvHome, in
// the workspace), so the user's own configuration and credentials are never
// used.

// modelConnPrefix names the model proxy's connections.
const modelConnPrefix = bundle.ModelConnPrefix

// cliEnvDropped are variables of the caller's environment the server (and so
// the CLI) must not inherit in a real-CLI run: credentials that would reach
// the recorder unknown to it, switches to other model providers, and what
// the run sets itself.
var cliEnvDropped = slices.Concat(cliwrap.CredentialEnv, []string{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", cliwrap.EnvHome})

// checkProviderCLI refuses a --provider-cli that cannot be run.
func checkProviderCLI(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return &OptionError{"--provider-cli", path, "no such file (give the path of the Claude Code CLI, e.g. \"$(command -v claude)\")"}
	case st.IsDir():
		return &OptionError{"--provider-cli", path, "it is a directory, not the Claude Code CLI"}
	case st.Mode()&0o111 == 0:
		return &OptionError{"--provider-cli", path, "it is not executable"}
	}
	return nil
}

// providerCLI is the real CLI of one run.
type providerCLI struct {
	path    string // absolute
	version string // what --version printed
	apiKey  string // the run's ANTHROPIC_API_KEY
	home    string // the CLI's private HOME
}

// newProviderCLI asks the CLI its version (so a binary that is not the CLI
// fails before the run, with what it said) and makes the run's key.
func newProviderCLI(ctx context.Context, path, home string) (*providerCLI, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	env, err := cliwrap.Env(cliwrap.WithoutEnv(os.Environ(), cliEnvDropped), home)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, abs, "--version")
	cmd.Env = append(env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, &OptionError{"--provider-cli", path, "`--version` failed (" + err.Error() + ")"}
	}
	version := strings.TrimSpace(string(out))
	if !strings.Contains(version, "(Claude Code)") {
		said := version
		if len(said) > 160 {
			said = said[:160] + "..."
		}
		return nil, &OptionError{"--provider-cli", path, fmt.Sprintf("not the Claude Code CLI: `--version` printed %q, want a version naming Claude Code, e.g. \"2.1.3 (Claude Code)\"", said)}
	}
	return &providerCLI{path: abs, version: version, apiKey: "sk-ant-wireproof-" + rand.Text(), home: home}, nil
}

// install writes the `claude` the server runs: the wrapper around the real
// CLI, through this wireproof executable.
func (c *providerCLI) install(dir, serverHome, exe string) error {
	script := "#!/bin/sh\nexec " + shellQuote(exe) + " provider wrap " + shellQuote(c.path) + " \"$@\"\n"
	return installClaude(dir, serverHome, script)
}

// env is what the server's environment gets for its CLI: the model's
// address and key, the CLI's private home, no nonessential traffic, and
// bypass permissions accepted as root (the CLI refuses them otherwise).
func (c *providerCLI) env(modelURL string) []string {
	env := []string{
		"ANTHROPIC_BASE_URL=" + modelURL,
		"ANTHROPIC_API_KEY=" + c.apiKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		cliwrap.EnvHome + "=" + c.home,
	}
	if os.Geteuid() == 0 {
		env = append(env, "IS_SANDBOX=1")
	}
	return env
}
