// Command wireproof records the wire traffic of live runs against orchestration
// servers into evidence bundles and re-runs every check of those runs offline.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...";
// otherwise it comes from the module version or the VCS revision the binary
// was built from.
var version = buildVersion()

func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "dev"
	}
	return "dev-" + rev + dirty
}

// globalOptions are what every verb shares. Each verb's own flags are in an
// options struct local to its constructor.
type globalOptions struct {
	// version is the tool's version, written into what the verbs record
	// (bundle headers, verify's tool name) and printed by --version.
	version string
}

// newRootCommand builds the whole command tree: every verb from its
// constructor, usage errors typed (usageError, exit 2) whether they come from
// flag parsing, an argument count or a verb's own checks. main runs it; tests
// run it in-process:
//
//	cmd := newRootCommand()
//	cmd.SetArgs([]string{"checks", "--json"})
//	cmd.SetOut(&stdout)
//	err := cmd.ExecuteContext(ctx)
func newRootCommand() *cobra.Command {
	g := &globalOptions{version: version}
	cmd := &cobra.Command{
		Use:   "wireproof",
		Short: "Record live runs into evidence bundles and replay their checks offline",
		Long: `wireproof records the wire traffic of live runs against agent-orchestration
servers (HTTP, WebSocket, the server process and its logs) into one compressed
evidence bundle, and re-runs every check of those runs offline, deterministically.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       g.version,

		SuggestionsMinimumDistance: 2,
		// An argument that is no verb is a usage error. cobra reports it
		// from its own command lookup, untyped, unless the root validates
		// its arguments itself, which takes the root being runnable: alone,
		// it prints the help as before.
		Args: unknownVerb,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(
		newChecksCommand(g),
		newDiffCommand(g),
		newExportCommand(g),
		newFixtureCommand(g),
		newIndexCommand(g),
		newModelCommand(g),
		newInspectCommand(g),
		newPlaybackCommand(g),
		newProviderCommand(g),
		newRecordCommand(g),
		newReplayCommand(g),
		newReportCommand(g),
		newScanCommand(g),
		newUploadCommand(g),
		newVerifyCommand(g),
		newViewCommand(g),
	)
	// cobra adds its completion verb when it runs; added now, its argument
	// checks are wrapped like every verb's.
	cmd.InitDefaultCompletionCmd()
	explainArgs(cmd)
	return cmd
}

// unknownVerb is the root's argument check: the message cobra gives an
// unknown verb (with its suggestions), as a usage error.
func unknownVerb(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n"
		for _, v := range s {
			msg += "\t" + v + "\n"
		}
	}
	return usageError{errors.New(msg)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, newRootCommand(), os.Stderr)
	stop()
	os.Exit(code)
}

// execute runs cmd (a root command whose arguments are set, or os.Args) and
// returns the exit status, having printed its error to stderr: what main
// does, and what tests run in-process.
func execute(ctx context.Context, cmd *cobra.Command, stderr io.Writer) int {
	err := cmd.ExecuteContext(ctx)
	code := exitCode(err, ctx.Err() != nil)
	if err != nil && !isSilent(err) {
		fmt.Fprintln(stderr, "wireproof:", err)
		if hint := storageHint(err); hint != "" {
			fmt.Fprintln(stderr, "wireproof:", hint)
		}
	}
	return code
}

// explainArgs makes cobra's argument-count errors ("accepts 1 arg(s),
// received 0"), which name neither the verb nor what it takes, name both:
// "inspect: accepts 1 arg(s), received 0; usage: wireproof inspect
// [flags] BUNDLE|s3://BUCKET/KEY". They stay usage errors (exit 2).
func explainArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		explainArgs(sub)
	}
	check := c.Args
	if check == nil || !c.HasParent() {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			verb := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
			return usageError{fmt.Errorf("%s: %w; usage: %s", verb, err, cmd.UseLine())}
		}
		return nil
	}
}
