// Command wireproof records the wire traffic of live runs against orchestration
// servers into evidence bundles and re-runs every check of those runs offline.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

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
