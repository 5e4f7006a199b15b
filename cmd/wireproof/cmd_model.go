package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/cassette"
)

// modelOptions are the flags of `wireproof model`.
type modelOptions struct {
	addr     string
	fault    string
	quiet    bool
	cassette []string
	fast     bool
	strict   bool
	stdout   io.Writer
	stderr   io.Writer
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

It also serves OpenAI's Responses API (POST /v1/responses, streamed or not,
errors in OpenAI's shape) for the Codex CLI: a CODEX_HOME/config.toml with
model_provider naming a provider whose base_url is <the printed URL>/v1,
wire_api = "responses" and an env_key points it here.

It prints its base URL on stdout, one line per model call (the plan and step
played) on stderr unless -q (--quiet), and serves until SIGINT or SIGTERM (exit 0).
--fault makes it misbehave on purpose: ` + strings.Join(model.Faults, ", ") + `.

--cassette BUNDLE|DIR (repeatable) serves recorded model calls instead: the
model-h* exchanges of bundles 'verify --provider-cli' wrote (a directory: every
*.zst in it). A request is matched to a recorded one by its conversation (model,
tool names, messages) with run-bound values (ids, loopback ports, temporary
directories, times) bound to this run's and replaced in the recorded answer,
which streams at its recorded pace (--fast: at once). A request that matches
nothing is answered 400 invalid_request_error naming the nearest recorded
request and the first field that differs; on exit a summary is printed, and
--strict exits 4 if anything missed. docs/model.md says what is matched.`,
		Example: `  wireproof model --listen 127.0.0.1:0
  ANTHROPIC_BASE_URL=http://127.0.0.1:PORT ANTHROPIC_API_KEY=test IS_SANDBOX=1 \
    claude -p --output-format stream-json --verbose --permission-mode bypassPermissions "..."
  wireproof model --cassette ./evidence/idle-1.zst --strict`,
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
	cmd.Flags().StringArrayVar(&opts.cassette, "cassette", nil, "serve the recorded model calls of this bundle or directory of bundles (repeatable) instead of the scripted model")
	cmd.Flags().BoolVar(&opts.fast, "fast", false, "with --cassette: answer at once instead of at the recorded pace")
	cmd.Flags().BoolVar(&opts.strict, "strict", false, "with --cassette: exit 4 if a request matched no recorded call")
	completeValues(cmd, "fault", model.Faults...)
	return cmd
}

// logf is the log of each model call on stderr, one line at a time under
// mu (nil: a lock of its own); nil with --quiet.
func (o modelOptions) logf(mu *sync.Mutex) func(format string, args ...any) {
	if o.quiet {
		return nil
	}
	if mu == nil {
		mu = new(sync.Mutex)
	}
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(o.stderr, "wireproof "+format+"\n", args...)
	}
}

// runModel serves the scripted model until ctx ends. An unknown fault is a
// usage error, and so is an address it cannot listen on, as for the other
// verbs that serve (--listen of record, playback and view).
func runModel(ctx context.Context, opts modelOptions) error {
	if err := model.CheckFault(opts.fault); err != nil {
		return usageError{fmt.Errorf("--fault: %w", err)}
	}
	if len(opts.cassette) > 0 {
		return runCassette(ctx, opts)
	}
	if opts.fast || opts.strict {
		return usageError{errors.New("--fast and --strict need --cassette")}
	}
	mo := &model.Options{Fault: opts.fault, Logf: opts.logf(nil)}
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

// runCassette serves the recorded model calls of opts.cassette until ctx
// ends, then prints what was played and missed; --strict makes a miss exit
// 4. A cassette that cannot be read is exit 3.
func runCassette(ctx context.Context, opts modelOptions) error {
	if opts.fault != "" {
		return usageError{errors.New("--fault and --cassette cannot be combined: a cassette plays what was recorded, faults included")}
	}
	c, err := cassette.Load(ctx, opts.cassette...)
	if err != nil {
		return unreadableError{err}
	}
	var mu sync.Mutex
	co := &cassette.Options{Fast: opts.fast, Logf: opts.logf(&mu)}
	h := cassette.NewHandler(c, co)
	s, err := model.Serve(ctx, opts.addr, h)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: %w", opts.addr, err)}
	}
	fmt.Fprintln(opts.stdout, s.URL())
	fmt.Fprintf(opts.stderr, "wireproof model: cassette of %d recorded model calls\n", len(c.Calls))
	if opts.ready != nil {
		opts.ready(s.URL())
	}
	select {
	case <-ctx.Done():
	case <-s.Done():
	}
	err = s.Close()
	rep := h.Report()
	mu.Lock()
	fmt.Fprint(opts.stderr, rep.Summary())
	mu.Unlock()
	if err == nil && opts.strict && rep.Missed > 0 {
		return playbackMissedError{misses: rep.Missed, verb: "model"}
	}
	return err
}
