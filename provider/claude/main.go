package claude

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Main runs the scripted provider as a process: args are what follows
// `wireproof provider claude`. SIGTERM and SIGINT end it cleanly (exit 0);
// the crash fault exits 1. It returns the exit status.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := Run(ctx, args, nil)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrCrashed):
		return 1
	default:
		os.Stderr.WriteString("wireproof provider claude: " + err.Error() + "\n")
		return 2
	}
}

// HelperMain makes a test binary stand in for `wireproof provider claude`:
// called first in TestMain, it runs the provider and exits when the binary
// was started as `<test binary> provider claude ARGS...`, and returns
// otherwise. Servers started in-process by tests then find their provider at
// os.Args[0], as the fixture server finds it at its own executable.
func HelperMain() {
	helperInstalled = true
	if len(os.Args) > 2 && os.Args[1] == "provider" && os.Args[2] == "claude" {
		os.Exit(Main(os.Args[3:]))
	}
}

var helperInstalled bool

// HelperInstalled reports whether this process called HelperMain: a test
// binary that did not must not be started as a provider (it would run its
// tests again instead).
func HelperInstalled() bool { return helperInstalled }
