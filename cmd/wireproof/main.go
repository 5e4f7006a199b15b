// Command wireproof records the wire traffic of live runs against orchestration
// servers into evidence bundles and re-runs every check of those runs offline.
package main

import (
	"context"
	"fmt"
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

var cmdRoot = &cobra.Command{
	Use:   "wireproof",
	Short: "Record live runs into evidence bundles and replay their checks offline",
	Long: `wireproof records the wire traffic of live runs against agent-orchestration
servers (HTTP, WebSocket, the server process and its logs) into one compressed
evidence bundle, and re-runs every check of those runs offline, deterministically.`,
	SilenceUsage:  true,
	SilenceErrors: true,
	Version:       version,
}

func init() {
	cmdRoot.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError{err}
	})
}

func main() {
	explainArgs(cmdRoot)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmdRoot.ExecuteContext(ctx)
	interrupted := ctx.Err() != nil
	stop()
	code := exitCode(err, interrupted)
	if err != nil && !isSilent(err) {
		fmt.Fprintln(os.Stderr, "wireproof:", err)
		if hint := storageHint(err); hint != "" {
			fmt.Fprintln(os.Stderr, "wireproof:", hint)
		}
	}
	os.Exit(code)
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
