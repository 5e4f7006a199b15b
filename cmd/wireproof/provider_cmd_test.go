package main

import (
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
	if code, _, _ := runBin(t, "provider"); code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
}
