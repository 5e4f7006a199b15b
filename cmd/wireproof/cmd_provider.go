package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/provider/claude"
	"github.com/wireproof/wireproof/provider/cliwrap"
)

// newProviderCommand builds `wireproof provider` and its subcommands.
func newProviderCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "provider",
		Short: "Scripted provider processes that stand in for a model provider's CLI",
		Long: `provider runs a scripted stand-in for the executable an orchestration server
starts per provider session, so a real server (or the embedded fixture server)
can be verified end to end without provider credentials.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{errors.New("provider needs a subcommand: claude")}
		},
	}
	cmd.AddCommand(newProviderClaudeCommand(g), newProviderWrapCommand(g))
	return cmd
}

// newProviderWrapCommand builds `wireproof provider wrap`, the hidden verb
// verify --provider-cli gives the server as its claude or codex.
func newProviderWrapCommand(*globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "wrap CLI [ARGS...]",
		Short: "Run a real provider CLI with its stdio streamed to verify's recorder",
		Long: `wrap execs CLI (the real Claude Code CLI, or the Codex CLI) with ARGS, relaying
its stdin, stdout and stderr line by line, and streams its argv, every line and
its exit to the recorder's provider tap (WIREPROOF_PROVIDER_TAP). An MCP server
at WIREPROOF_PROVIDER_MCP_UPSTREAM is reached through the recording proxy
(WIREPROOF_PROVIDER_MCP_PROXY) instead: one of --mcp-config, or one a stdin
request names in params.config.mcp_servers (Codex's thread/start), that line
tapped as it came. WIREPROOF_PROVIDER_HOME is the CLI's HOME, with
CLAUDE_CONFIG_DIR, CODEX_HOME and TMPDIR below it, and the caller's OAuth
tokens, API keys and provider switches are not passed on. It exits with the
CLI's status (128+N when signal N ended it, 127 when it could not be started).
verify --provider-cli installs it as the server's claude or codex; it is not
meant to be run by hand.`,
		Hidden:             true,
		DisableFlagParsing: true, // the CLI's flags are passed through
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := cliwrap.Run(cmd.Context(), args, &cliwrap.Options{Stdin: cmd.InOrStdin(), Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()})
			var ue *cliwrap.UsageError
			if errors.As(err, &ue) {
				return usageError{err}
			}
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "wireproof provider wrap:", err)
			}
			if code != 0 {
				return exitStatusError{code}
			}
			return nil
		},
	}
}

// newProviderClaudeCommand builds `wireproof provider claude`.
func newProviderClaudeCommand(*globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "claude [ARGS...]",
		Short: "Play the Claude CLI: stream-json on stdin/stdout, MCP client of --mcp-config",
		Long: `claude behaves as the Claude CLI does for an orchestration server: it answers
--version, speaks stream-json on stdin and stdout (initialize and other control
requests, system/init, assistant text and tool_use, user tool_result, result),
calls the server's tools over MCP (--mcp-config, Streamable HTTP), and plays the
live verifier's scenarios from the prompts it is given. Arguments it does not
know are ignored and named on stderr. It ends on stdin's EOF or SIGTERM.
--help (alone) prints this text.

Environment: WIREPROOF_PROVIDER_TAP (stream argv and stdio lines to a recorder),
WIREPROOF_PROVIDER_MCP_PROXY and WIREPROOF_PROVIDER_MCP_UPSTREAM (send MCP
requests through a recording proxy), WIREPROOF_PROVIDER_FAULT (a provider fault
mode: ` + joinFaults() + `).`,
		Example: `  wireproof provider claude --version
  wireproof provider claude --output-format stream-json --input-format stream-json --verbose \
    --mcp-config '{"mcpServers":{"t3-code":{"type":"http","url":"http://127.0.0.1:3773/mcp"}}}'`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Flag parsing is off (the Claude CLI's flags are passed through),
			// so --help would be ignored and the stand-in would wait on stdin.
			if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
				return cmd.Help()
			}
			return runProviderClaude(cmd.Context(), args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func joinFaults() string {
	s := ""
	for i, f := range claude.Faults {
		if i > 0 {
			s += ", "
		}
		s += f
	}
	return s
}

// runProviderClaude runs the scripted Claude CLI. A bad --mcp-config is a
// usage error; the crash fault exits 1 as a crashed CLI does.
func runProviderClaude(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) error {
	err := claude.Run(ctx, args, &claude.Options{Stdin: in, Stdout: out, Stderr: errw})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, claude.ErrCrashed):
		return exitStatusError{1}
	default:
		return usageError{err}
	}
}
