// Command wireproof records the wire traffic of live runs against orchestration
// servers into evidence bundles and re-runs every check of those runs offline.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmdRoot.ExecuteContext(ctx)
	interrupted := ctx.Err() != nil
	stop()
	code := exitCode(err, interrupted)
	if err != nil && !isSilent(err) {
		fmt.Fprintln(os.Stderr, "wireproof:", err)
	}
	os.Exit(code)
}
