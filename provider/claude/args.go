package claude

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Version is what `claude --version` prints: a version the orchestration
// server's health check accepts for every model.
const Version = "2.1.220"

// Config is what the provider makes of its command line.
type Config struct {
	Version      bool
	OutputFormat string
	InputFormat  string
	Model        string
	SessionID    string // --session-id
	Resume       string // --resume
	MCPServers   map[string]MCPServer
	Unknown      []string // flags it does not know (logged, ignored)
}

// MCPServer is one server of --mcp-config.
type MCPServer struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// boolFlags are the CLI's flags that take no value.
var boolFlags = map[string]bool{
	"--verbose": true, "--strict-mcp-config": true, "--print": true, "-p": true,
	"--include-partial-messages": true, "--continue": true, "-c": true,
	"--dangerously-skip-permissions": true, "--allow-dangerously-skip-permissions": true, "--fork-session": true,
	"--replay-user-messages": true, "--debug": true, "-d": true,
	"--version": true, "-v": true,
}

// ParseArgs reads the arguments the CLI is started with. Flags may be given
// as --flag value or --flag=value; an unknown flag is kept in Unknown, with
// the value that follows it if that value is not itself a flag.
func ParseArgs(args []string) (Config, error) {
	c := Config{MCPServers: map[string]MCPServer{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		if !strings.HasPrefix(name, "-") {
			c.Unknown = append(c.Unknown, a)
			continue
		}
		if !hasValue && !boolFlags[name] && i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
			i++
			value, hasValue = args[i], true
		}
		switch name {
		case "--version", "-v":
			c.Version = true
		case "--output-format":
			c.OutputFormat = value
		case "--input-format":
			c.InputFormat = value
		case "--model":
			c.Model = value
		case "--session-id":
			c.SessionID = value
		case "--resume", "-r":
			c.Resume = value
		case "--mcp-config":
			if err := c.addMCPConfig(value); err != nil {
				return c, err
			}
		case "--verbose", "--strict-mcp-config", "--dangerously-skip-permissions", "--allow-dangerously-skip-permissions", "--effort", "--allowedTools", "--allowed-tools", "--tools",
			"--permission-mode", "--setting-sources", "--permission-prompt-tool", "--max-thinking-tokens",
			"--max-turns", "--append-system-prompt", "--system-prompt", "--disallowedTools", "--fallback-model",
			"--add-dir", "--settings", "--agents", "--include-partial-messages":
			// Understood, and nothing to do for a scripted provider.
		default:
			c.Unknown = append(c.Unknown, a)
		}
	}
	return c, nil
}

// addMCPConfig reads one --mcp-config value: JSON or a file holding it.
func (c *Config) addMCPConfig(v string) error {
	raw := []byte(v)
	if t := strings.TrimSpace(v); !strings.HasPrefix(t, "{") {
		b, err := os.ReadFile(t)
		if err != nil {
			return fmt.Errorf("--mcp-config: %w", err)
		}
		raw = b
	}
	var doc struct {
		MCPServers map[string]MCPServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("--mcp-config: not an MCP configuration: %w", err)
	}
	for name, s := range doc.MCPServers {
		c.MCPServers[name] = s
	}
	return nil
}
