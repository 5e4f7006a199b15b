package verify

import (
	"context"
	"crypto/rand"
	"encoding/json"
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

// A run with Options.ProviderCLI puts a real provider CLI behind the
// server's provider sessions: the Claude Code CLI (T3's claudeAgent driver)
// or the Codex CLI (its codex driver), told apart by what `--version`
// prints. The server is given a shim (`claude` or `codex`, first on its PATH
// and as the providers.<driver>.binaryPath setting) that runs `wireproof
// provider wrap CLI ARGS`, which execs the real CLI and streams its stdio to
// the provider tap and its MCP requests through the recording proxy. The
// CLI's model is the scripted model (package model: the Messages API for
// Claude, the Responses API for Codex), served on loopback behind a second
// recording proxy (connections "model-h1", ...), with a random key of the
// run, which the recorder redacts in every spelling. The CLI's home is
// private to the run (cliwrap.EnvHome, in the workspace), so the user's own
// configuration and credentials are never used.
//
// Claude is pointed at the model by ANTHROPIC_BASE_URL and
// ANTHROPIC_API_KEY. Codex by a config.toml in its private CODEX_HOME (also
// the providers.codex.homePath setting) naming a model provider whose
// base_url is the model proxy's /v1, wire_api "responses", and env_key
// CodexKeyEnv, the variable that holds the run's key.

// The provider drivers: T3's names of the provider kinds whose CLI a run
// can put behind the server, and the instance ids of their built-in
// instances (Options.Provider).
const (
	DriverClaude = "claudeAgent"
	DriverCodex  = "codex"
)

// DefaultCodexModel is the model of a Codex run when none is given. It is
// not T3's default for its codex driver (gpt-5.6-sol, 0.0.33): for that
// model family Codex 0.169.0 offers its model one JavaScript `exec` tool
// (code mode) instead of exec_command and the MCP tools, which the
// scripted model does not play. T3 maps gpt-5-codex to gpt-5.4; both get
// the tools.
const DefaultCodexModel = "gpt-5-codex"

// CodexKeyEnv is the variable holding the run's key for the Codex CLI (the
// env_key of its model provider).
const CodexKeyEnv = "WIREPROOF_CODEX_API_KEY"

// codexProviderName is the model provider the run's config.toml names.
const codexProviderName = "wireproof"

// modelConnPrefix names the model proxy's connections.
const modelConnPrefix = bundle.ModelConnPrefix

// cliEnvDropped are variables of the caller's environment the server (and so
// the CLI) must not inherit in a real-CLI run: credentials that would reach
// the recorder unknown to it, switches to other model providers, the user's
// Codex home and launch arguments, and what the run sets itself.
var cliEnvDropped = slices.Concat(cliwrap.CredentialEnv, []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", cliwrap.EnvHome,
	"CODEX_HOME", "T3CODE_CODEX_LAUNCH_ARGS", CodexKeyEnv,
})

// checkProviderCLI refuses a --provider-cli that cannot be run.
func checkProviderCLI(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return &OptionError{"--provider-cli", path, "no such file (give the path of the Claude Code or the Codex CLI, e.g. \"$(command -v claude)\" or \"$(command -v codex)\")"}
	case st.IsDir():
		return &OptionError{"--provider-cli", path, "it is a directory, not a provider CLI"}
	case st.Mode()&0o111 == 0:
		return &OptionError{"--provider-cli", path, "it is not executable"}
	}
	return nil
}

// cliName is how a driver's CLI is called in messages.
func cliName(driver string) string {
	if driver == DriverCodex {
		return "the Codex CLI"
	}
	return "the Claude Code CLI"
}

// probeCLI asks the CLI at path its version, so that a binary that is not
// a provider CLI fails before the run, with what it said, and tells which
// CLI it is: its driver (DriverClaude, DriverCodex). It runs with a private
// home that it removes, so the user's configuration is not touched.
func probeCLI(ctx context.Context, path string) (version, driver string, err error) {
	home, err := os.MkdirTemp("", "wireproof-cli-probe-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	env, err := cliwrap.Env(cliwrap.WithoutEnv(os.Environ(), cliEnvDropped), home)
	if err != nil {
		return "", "", err
	}
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = append(env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", "", &OptionError{"--provider-cli", path, "`--version` failed (" + err.Error() + ")"}
	}
	version = strings.TrimSpace(string(out))
	switch {
	case strings.Contains(version, "(Claude Code)"):
		return version, DriverClaude, nil
	case strings.HasPrefix(version, "codex-cli "):
		return version, DriverCodex, nil
	}
	said := version
	if len(said) > 160 {
		said = said[:160] + "..."
	}
	return "", "", &OptionError{"--provider-cli", path, fmt.Sprintf("not the Claude Code CLI nor the Codex CLI: `--version` printed %q, want a version naming Claude Code, e.g. \"2.1.3 (Claude Code)\", or Codex's, e.g. \"codex-cli 0.169.0\"", said)}
}

// checkProviderDriver fills in the provider of a run whose --provider-cli
// is the driver's CLI, and refuses one that names the other driver.
func checkProviderDriver(o Options) (Options, error) {
	switch {
	case o.Provider == "":
		o.Provider = o.driver
	case o.Provider != o.driver:
		return o, &OptionError{"--provider", o.Provider, fmt.Sprintf("--provider-cli %s is %s (%s), whose provider is %s: give --provider %s, or the CLI of provider %s",
			o.ProviderCLI, cliName(o.driver), o.cliVersion, o.driver, o.driver, o.Provider)}
	}
	if o.driver == DriverCodex && o.RealModel {
		// A cassette (Responses API calls) and a named upstream work for
		// Codex as for Claude; the default real model is the Messages API's.
		return o, &OptionError{"--real-model", "true", "the Codex CLI's real model has no default here: give --model-upstream URL (a Responses API, https://host[:port]; the key from OPENAI_API_KEY)"}
	}
	return o, nil
}

// providerCLI is the real CLI of one run.
type providerCLI struct {
	path    string // absolute
	version string // what --version printed
	driver  string // DriverClaude or DriverCodex
	apiKey  string // the run's key for the model
	home    string // the CLI's private HOME
}

// newProviderCLI is the run's CLI, probed by Options.withDefaults, with the
// run's key.
func newProviderCLI(o Options, home string) (*providerCLI, error) {
	abs, err := filepath.Abs(o.ProviderCLI)
	if err != nil {
		return nil, err
	}
	key := "sk-ant-wireproof-" + rand.Text()
	if o.driver == DriverCodex {
		key = "sk-wireproof-codex-" + rand.Text()
	}
	return &providerCLI{path: abs, version: o.cliVersion, driver: o.driver, apiKey: key, home: home}, nil
}

// install writes the executable the server runs as its CLI: the wrapper
// around the real CLI, through this wireproof executable; and its
// settings.
func (c *providerCLI) install(dir, serverHome, exe string) error {
	script := "#!/bin/sh\nexec " + shellQuote(exe) + " provider wrap " + shellQuote(c.path) + " \"$@\"\n"
	if c.driver == DriverCodex {
		return installCodex(dir, serverHome, script, cliwrap.CodexHome(c.home))
	}
	return installClaude(dir, serverHome, script)
}

// env is what the server's environment gets for its CLI (the server hands
// it on): for Claude, the model's address and key, no nonessential traffic,
// and bypass permissions accepted as root (the CLI refuses them otherwise);
// for Codex, the key (its config.toml, written here, names the model); and
// the CLI's private home.
func (c *providerCLI) env(modelURL string) ([]string, error) {
	if c.driver == DriverCodex {
		if err := writeCodexConfig(cliwrap.CodexHome(c.home), modelURL); err != nil {
			return nil, err
		}
		return []string{
			CodexKeyEnv + "=" + c.apiKey,
			cliwrap.EnvHome + "=" + c.home,
			"CODEX_HOME=" + cliwrap.CodexHome(c.home),
		}, nil
	}
	env := []string{
		"ANTHROPIC_BASE_URL=" + modelURL,
		"ANTHROPIC_API_KEY=" + c.apiKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		cliwrap.EnvHome + "=" + c.home,
	}
	if os.Geteuid() == 0 {
		env = append(env, "IS_SANDBOX=1")
	}
	return env, nil
}

// writeCodexConfig writes the Codex CLI's config.toml into its home: the
// scripted model, behind the model proxy at modelURL, as its only model
// provider (the Responses API, the key in CodexKeyEnv), and no update check.
func writeCodexConfig(codexHome, modelURL string) error {
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return err
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a JSON string is a TOML basic string
	cfg := "# Written by wireproof verify: this run's Codex talks to the scripted model only.\n" +
		"model_provider = " + q(codexProviderName) + "\n" +
		"check_for_update_on_startup = false\n\n" +
		"[model_providers." + codexProviderName + "]\n" +
		"name = \"wireproof scripted model\"\n" +
		"base_url = " + q(modelURL+"/v1") + "\n" +
		"wire_api = \"responses\"\n" +
		"env_key = " + q(CodexKeyEnv) + "\n"
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("writing the Codex CLI's config.toml: %w", err)
	}
	return nil
}
