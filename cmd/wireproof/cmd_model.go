package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/model"
)

// modelOptions are the flags of `wireproof model`.
type modelOptions struct {
	addr   string
	fault  string
	quiet  bool
	stdout io.Writer
	stderr io.Writer
	// ready, when set, gets the base URL once the model serves (tests).
	ready func(url string)
}

// newModelCommand builds `wireproof model`.
func newModelCommand(*globalOptions) *cobra.Command {
	var opts modelOptions
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Serve a scripted Anthropic Messages API on loopback for a real Claude CLI",
		Long: `model serves a scripted model: Anthropic's Messages API (POST /v1/messages,
streamed with the API's server-sent events or not, POST /v1/messages/count_tokens,
errors in the API's shape) that plays the live verifier's scenarios (idle,
active, native, nested) as a model would, from each request alone. Point a real
Claude CLI at it with ANTHROPIC_BASE_URL=<the printed URL> and any
ANTHROPIC_API_KEY: the CLI runs its tools, MCP calls and background tasks for
real, and only the model is scripted. docs/model.md describes the plans.

It prints its base URL on stdout, one line per model call (the plan and step
played) on stderr unless -q (--quiet), and serves until SIGINT or SIGTERM (exit 0).
--fault makes it misbehave on purpose: ` + strings.Join(model.Faults, ", ") + `.`,
		Example: `  wireproof model --listen 127.0.0.1:0
  ANTHROPIC_BASE_URL=http://127.0.0.1:PORT ANTHROPIC_API_KEY=test IS_SANDBOX=1 \
    claude -p --output-format stream-json --verbose --permission-mode bypassPermissions "..."`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runModel(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.addr, "listen", "127.0.0.1:0", "address to listen on (host:port; port 0 picks a free one)")
	aliasFlags(cmd.Flags(), map[string]string{"addr": "listen"}) // --addr before the grammar was one
	cmd.Flags().StringVar(&opts.fault, "fault", "", "a model fault mode: "+strings.Join(model.Faults, ", "))
	cmd.Flags().BoolVarP(&opts.quiet, "quiet", "q", false, "do not log each model call on stderr")
	completeValues(cmd, "fault", model.Faults...)
	return cmd
}

// runModel serves the scripted model until ctx ends. An unknown fault is a
// usage error, and so is an address it cannot listen on, as for the other
// verbs that serve (--listen of record, playback and view).
func runModel(ctx context.Context, opts modelOptions) error {
	if err := model.CheckFault(opts.fault); err != nil {
		return usageError{fmt.Errorf("--fault: %w", err)}
	}
	var mu sync.Mutex
	mo := &model.Options{Fault: opts.fault}
	if !opts.quiet {
		mo.Logf = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(opts.stderr, "wireproof "+format+"\n", args...)
		}
	}
	s, err := model.Start(ctx, opts.addr, mo)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: %w", opts.addr, err)}
	}
	fmt.Fprintln(opts.stdout, s.URL())
	if opts.fault != "" {
		fmt.Fprintf(opts.stderr, "wireproof model: fault %s (fails check %s)\n", opts.fault, model.FaultChecks[opts.fault])
	}
	if opts.ready != nil {
		opts.ready(s.URL())
	}
	select {
	case <-ctx.Done():
	case <-s.Done():
	}
	return s.Close()
}
