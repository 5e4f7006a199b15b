package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/fixtures"
	"github.com/wireproof/wireproof/t3"
)

type fixtureOptions struct {
	bootstrapFD int
	logLevel    string
	fault       string
	// serialization overrides the bootstrap's "serialization"; "" keeps it.
	serialization string
}

// newFixtureCommand builds `wireproof fixture` and its subcommands.
func newFixtureCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fixture",
		Short: "Run the embedded T3-compatible fixture server",
		Long: `fixture runs wireproof's fixture server: a T3-compatible orchestration server
that runs its provider sessions on the scripted provider ('wireproof provider
claude', one process per session) and keeps its state in SQLite. It stands where the real T3
server stands, so 'wireproof verify' needs no provider credentials.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{errors.New("fixture needs a subcommand: start or faults")}
		},
	}
	cmd.AddCommand(newFixtureStartCommand(g), newFixtureFaultsCommand(g))
	return cmd
}

// newFixtureStartCommand builds `wireproof fixture start`.
func newFixtureStartCommand(*globalOptions) *cobra.Command {
	var opts fixtureOptions
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start the fixture server from a bootstrap JSON on a file descriptor",
		Long: `start reads the bootstrap JSON (mode, port, host, t3Home, desktopBootstrapToken,
and optionally fault and serialization) from --bootstrap-fd until EOF, listens on host:port, prints
"startup phase: complete" on stdout when ready, and serves until SIGTERM or
SIGINT, after which it closes its database cleanly and exits 0. The Effect RPC
serialization on /ws is json unless --serialization (or the bootstrap's
"serialization") says ndjson: like Effect's, it is configured, not negotiated.`,
		Example: `  wireproof fixture start --bootstrap-fd 3 --log-level debug 3<bootstrap.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFixtureStart(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.bootstrapFD, "bootstrap-fd", -1, "file descriptor carrying the bootstrap JSON (required)")
	f.StringVar(&opts.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&opts.fault, "fault", "", "fault mode (see 'wireproof fixture faults'); overrides the bootstrap's")
	f.StringVar(&opts.serialization, "serialization", "", "Effect RPC serialization, json or ndjson (default: the bootstrap's, else json)")
	completeValues(cmd, "log-level", "debug", "info", "warn", "error")
	completeValues(cmd, "fault", faultValues()...)
	completeValues(cmd, "serialization", "json", "ndjson")
	return cmd
}

// newFixtureFaultsCommand builds `wireproof fixture faults`.
func newFixtureFaultsCommand(*globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "faults",
		Short: "List the fault modes and the check each one trips",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFixtureFaults(cmd.Context(), cmd.OutOrStdout())
		},
	}
}

func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("invalid --log-level %q: want debug, info, warn or error", s)
}

// readBootstrap reads and decodes the bootstrap JSON from fd, which the
// launcher closes after writing.
func readBootstrap(fd int) (t3.Bootstrap, error) {
	var b t3.Bootstrap
	if fd < 0 {
		return b, usageError{errors.New("--bootstrap-fd is required")}
	}
	f := os.NewFile(uintptr(fd), "bootstrap")
	if f == nil {
		return b, usageError{fmt.Errorf("--bootstrap-fd %d is not an open file descriptor", fd)}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return b, usageError{fmt.Errorf("reading the bootstrap from fd %d: %w", fd, err)}
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return b, usageError{fmt.Errorf("the bootstrap on fd %d is not a JSON object: %w", fd, err)}
	}
	if b.T3Home == "" || b.DesktopBootstrapToken == "" {
		return b, usageError{fmt.Errorf("the bootstrap on fd %d needs t3Home and desktopBootstrapToken", fd)}
	}
	return b, nil
}

func runFixtureStart(ctx context.Context, o fixtureOptions, stdout io.Writer) error {
	// The launcher is read before the ready line is printed: a launcher
	// that dies as soon as it reads that line would otherwise be gone
	// already, and the fixture would take its new parent for its own.
	ppid := os.Getppid()
	level, err := parseLogLevel(o.logLevel)
	if err != nil {
		return usageError{err}
	}
	if _, err := fixtures.LookupFault(o.fault); err != nil {
		return usageError{fmt.Errorf("--fault: %w", err)}
	}
	if o.serialization != "" {
		if _, err := fixtures.CheckSerialization(o.serialization); err != nil {
			return usageError{fmt.Errorf("--serialization: %w", err)}
		}
	}
	b, err := readBootstrap(o.bootstrapFD)
	if err != nil {
		return err
	}
	if _, err := fixtures.LookupFault(b.Fault); err != nil {
		return usageError{fmt.Errorf("bootstrap fault: %w", err)}
	}
	if _, err := fixtures.CheckSerialization(b.Serialization); err != nil {
		return usageError{fmt.Errorf("bootstrap serialization: %w", err)}
	}
	log := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: level}))
	srv, err := fixtures.Start(ctx, &fixtures.ServerOptions{Bootstrap: b, Fault: o.fault, Serialization: o.serialization, Logger: log})
	if err != nil {
		return err
	}
	// The line the launcher waits for, always printed whatever the level.
	fmt.Fprintf(stdout, "%s (listening on %s)\n", t3.ReadyLogLine, srv.Addr())
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case <-parentGone(ctx, ppid, parentPoll):
		log.Info("shutting down: the process that started the server is gone")
	}
	if err := srv.Close(); err != nil {
		return fmt.Errorf("closing the fixture server: %w", err)
	}
	log.Info("stopped")
	return nil
}

// parentPoll is how often the fixture server checks that its parent lives.
const parentPoll = 200 * time.Millisecond

// parentGone is closed once this process's parent is no longer ppid: it died
// and the process was handed to init (or a subreaper). A fixture server
// whose launcher is gone has nobody left to stop it, so it stops itself, as
// on SIGTERM. The kernel has no notification for this that works for any
// parent, so it polls; the goroutine ends with ctx.
func parentGone(ctx context.Context, ppid int, every time.Duration) <-chan struct{} {
	gone := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if os.Getppid() != ppid {
					close(gone)
					return
				}
			}
		}
	}()
	return gone
}

func runFixtureFaults(_ context.Context, stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tOF\tTRIPS\tWHAT IT DOES")
	for _, f := range fixtures.Faults {
		of := "server"
		if f.Provider {
			of = "provider"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, of, f.Check, f.Description)
	}
	return tw.Flush()
}
