package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/provider/claude"
)

func TestProviderClaudeVersion(t *testing.T) {
	code, stdout, stderr := runBin(t, "provider", "claude", "--version")
	if code != exitOK || strings.TrimSpace(stdout) != claude.Version+" (Claude Code)" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestProviderClaudeBadMCPConfig(t *testing.T) {
	code, _, stderr := runBin(t, "provider", "claude", "--mcp-config", "{not json")
	if code != exitUsage || !strings.Contains(stderr, "--mcp-config") {
		t.Fatalf("exit %d, stderr %q; want %d naming --mcp-config", code, stderr, exitUsage)
	}
}

func TestProviderNeedsSubcommand(t *testing.T) {
	if code, _, _ := runCLI(t, "provider"); code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
}

// TestProviderClaudeHelp: --help prints the help, fault modes included, and
// exits 0 without waiting on stdin (which stays open here, as a terminal's
// would), instead of being ignored as an unknown Claude CLI argument.
func TestProviderClaudeHelp(t *testing.T) {
	for _, flag := range []string{"--help", "-h"} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(wireproofBin, "provider", "claude", flag)
		var stdout, stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = r, &stdout, &stderr
		err = cmd.Run()
		r.Close()
		w.Close()
		if code := exitStatus(t, err); code != exitOK {
			t.Errorf("%s: exit %d, stderr %q", flag, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), "WIREPROOF_PROVIDER_FAULT") || !strings.Contains(stdout.String(), claude.Faults[0]) {
			t.Errorf("%s: stdout is not the help with the fault modes:\n%s", flag, stdout.String())
		}
		if strings.Contains(stderr.String(), "ignoring arguments") {
			t.Errorf("%s: stderr %q", flag, stderr.String())
		}
	}
}

// TestProviderWrapExitStatus: the hidden provider wrap exits with the
// wrapped CLI's status, 127 when it cannot be started, 2 without a CLI, and
// relays the CLI's stdout.
func TestProviderWrapExitStatus(t *testing.T) {
	if code, stdout, stderr := runBin(t, "provider", "wrap", "sh", "-c", "echo '{\"type\":\"x\"}'; exit 7"); code != 7 || stdout != "{\"type\":\"x\"}\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 7 and the CLI's line", code, stdout, stderr)
	}
	if code, _, stderr := runBin(t, "provider", "wrap", "/nonexistent/claude"); code != 127 || !strings.Contains(stderr, "/nonexistent/claude") {
		t.Errorf("exit %d, stderr %q; want 127 naming the CLI", code, stderr)
	}
	if code, _, _ := runBin(t, "provider", "wrap"); code != exitUsage {
		t.Errorf("exit %d without a CLI, want %d", code, exitUsage)
	}
}
