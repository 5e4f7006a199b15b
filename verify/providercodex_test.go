package verify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/provider/cliwrap"
	"github.com/wireproof/wireproof/verify"
)

// TestProviderCodexSettings: what the server is given for the Codex CLI,
// read back from a kept workspace: the codex shim running `wireproof
// provider wrap CLI`, and the providers.codex settings naming it and the
// private CODEX_HOME (its config.toml is written once the model is up:
// TestProviderCodexScenarios reads it). Native on Codex does not apply, so
// the run starts no server.
func TestProviderCodexSettings(t *testing.T) {
	cli := testkit.CodexCLI(t, "..")
	res := runOnce(t, verify.Options{Scenario: assert.ScenarioNative, ProviderCLI: cli, Timeout: cliTimeout, KeepWorkspace: true})
	if res.Verdict.Status != assert.StatusNotApplicable {
		t.Fatalf("native on Codex: %s, want %s", res.Verdict.Status, assert.StatusNotApplicable)
	}
	var settings struct {
		Providers map[string]map[string]string `json:"providers"`
	}
	b, err := os.ReadFile(filepath.Join(res.Workspace, "home", "userdata", "settings.json"))
	if err != nil || json.Unmarshal(b, &settings) != nil {
		t.Fatalf("settings: %v\n%s", err, b)
	}
	codex := settings.Providers[verify.DriverCodex]
	home := cliwrap.CodexHome(filepath.Join(res.Workspace, "provider-home"))
	if codex["homePath"] != home || codex["binaryPath"] != filepath.Join(res.Workspace, "bin", "codex") || len(settings.Providers) != 1 {
		t.Errorf("settings %s: want providers.codex with binaryPath <work>/bin/codex and homePath %s", b, home)
	}
	shim, err := os.ReadFile(codex["binaryPath"])
	if err != nil || !strings.Contains(string(shim), " provider wrap '"+cli+"' \"$@\"") {
		t.Errorf("the codex shim: %v\n%s", err, shim)
	}
}
