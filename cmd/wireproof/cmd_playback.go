package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/playback"
)

type playbackOptions struct {
	listen string
	timing string
	strict bool
	json   bool
	output string

	stdout io.Writer // the URL, alone, for scripts
	stderr io.Writer // the banner, misses as they happen, the report
}

// newPlaybackCommand builds `wireproof playback`.
func newPlaybackCommand(g *globalOptions) *cobra.Command {
	var opts playbackOptions
	cmd := &cobra.Command{
		Use:   "playback BUNDLE [--listen ADDR] [--timing recorded|fast|xN] [--strict] [--json] [-o PLAYBACK.zst]",
		Short: "Serve a bundle's recorded server side to a live client",
		Long: `playback serves, on one port, the upstream side of every HTTP exchange and
WebSocket connection in BUNDLE, so that a client (a web app, a CLI, a test) can
run against a recorded server without the server or its providers.

HTTP requests are matched by method, path, query and body (JSON compared
semantically); identical requests are served in recorded order, streamed
bodies and server-sent events chunk by chunk. WebSocket connections are
matched by path; Effect RPC (json and ndjson) and JSON-RPC 2.0 requests are
matched by method and payload and answered under the client's request id, a
stream's chunks paced by the client's Acks. Ids the client makes (UUIDs, any
field named id or ...Id) are learned as the session goes and every reply
carries the client's ids. Credentials are accepted whatever their value.

A request that matches nothing gets an error (404, an Effect Die, a JSON-RPC
error) naming the closest recorded candidate and the difference; a client
message an RPC connection cannot decode (not JSON, an unknown tag, a binary
frame) gets an Effect Defect or a JSON-RPC error saying what was wrong. Both
are misses, printed on stderr as they happen.

It prints its URL on stdout and serves until SIGINT or SIGTERM, its normal
end: it prints what was played, repeated (answered again: a client polling
more often, or reconnecting), missed and never played, and exits 0. --json
also prints that report as one JSON object on stdout. --timing: recorded
keeps the recorded gaps, fast sends at once, xN plays N times as fast. With
--strict it exits 4 if anything missed or a recorded request was never
played. With -o the session is recorded like any other, misses and the
report included. A bundle that cannot be read exits 3 before anything is
served, 7 when a bundle is damaged (its stored bytes are not what its writer
wrote).`,
		Example: `  wireproof playback run.zst > url &
  wireproof playback run.zst --timing fast --strict -o played.zst`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runPlayback(cmd.Context(), opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.listen, "listen", "127.0.0.1:0", "address to serve on")
	f.StringVar(&opts.timing, "timing", "recorded", "recorded, fast or xN (N times as fast)")
	f.BoolVar(&opts.strict, "strict", false, "exit 4 if a request missed or a recorded one was never played")
	f.BoolVar(&opts.json, "json", false, "print the final report as one JSON object on stdout")
	outFlag(f, &opts.output, "record the playback session into this bundle (must not exist)")
	aliasFlags(f, map[string]string{"output": "out"}) // --output before the grammar was one
	completeValues(cmd, "timing", "recorded", "fast", cobra.CompletionWithDesc("x2", "twice as fast (any xN)"), "x10")
	return cmd
}

// runPlayback serves the bundle until the context ends.
func runPlayback(ctx context.Context, opts playbackOptions, args []string) error {
	if opts.stdout == nil {
		opts.stdout = os.Stdout
	}
	if opts.stderr == nil {
		opts.stderr = os.Stderr
	}
	timing, err := playback.ParseTiming(opts.timing)
	if err != nil {
		return usageError{fmt.Errorf("--timing: %w", err)}
	}
	if opts.output != "" {
		if _, err := os.Lstat(opts.output); err == nil {
			return existsError(opts.output, "file")
		}
	}
	path := args[0]
	if err := notDirectories("playback", args); err != nil {
		return err
	}
	rec, err := playback.Load(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return interruptedError{ctx.Err()}
		}
		return unreadableError{err}
	}
	if rec.Truncated != "" {
		fmt.Fprintf(opts.stderr, "wireproof: warning: %s is truncated: %s\n", path, rec.Truncated)
	}
	if len(rec.Exchanges) == 0 && len(rec.Conns) == 0 {
		fmt.Fprintf(opts.stderr, "wireproof: warning: %s holds no HTTP exchange or WebSocket connection: every request will miss\n", path)
	}
	srv, err := playback.Serve(ctx, rec, &playback.ServeOptions{
		Options: playback.Options{
			Timing: timing,
			OnMiss: func(m playback.Miss) { fmt.Fprintf(opts.stderr, "wireproof: miss: %s\n", m.String()) },
		},
		Listen: opts.listen,
		Output: opts.output,
		Header: bundle.Header{Tool: "wireproof " + version, Manifest: bundle.Manifest{
			Scenario: rec.Header.Manifest.Scenario,
			Options: map[string]string{
				"playback": path,
				"timing":   timing.String(),
				"strict":   strconv.FormatBool(opts.strict),
				"listen":   opts.listen,
			},
		}},
	})
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return existsError(opts.output, "file")
		}
		if pe := (*fs.PathError)(nil); opts.output != "" && errors.As(err, &pe) {
			return outputError{opts.output, err} // -o could not be created
		}
		return usageError{fmt.Errorf("--listen %s: %w", opts.listen, err)}
	}
	into := ""
	if opts.output != "" {
		into = ", recording into " + opts.output
	}
	fmt.Fprintf(opts.stderr, "wireproof: playing back %s (%d HTTP exchanges, %d WebSocket connections, timing %s) at %s%s\n",
		path, len(rec.Exchanges), len(rec.Conns), timing, srv.URL, into)
	fmt.Fprintln(opts.stdout, srv.URL)

	<-ctx.Done()
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rep, err := srv.Close(cctx)
	fmt.Fprintf(opts.stderr, "wireproof: playback of %s: %s", path, rep.Summary())
	if opts.json {
		b, jerr := json.Marshal(rep)
		if jerr == nil {
			_, jerr = fmt.Fprintf(opts.stdout, "%s\n", b)
		}
		if jerr != nil {
			return fmt.Errorf("writing output: %w", jerr)
		}
	}
	if err != nil {
		if opts.output != "" {
			// Serving went well; what failed is closing the -o recording
			// (SIGINT is playback's normal end, so not "interrupted").
			return outputError{opts.output, fmt.Errorf("stopping playback: %w", err)}
		}
		return fmt.Errorf("stopping playback: %w", err)
	}
	if opts.strict && !rep.Clean() {
		return playbackMissedError{misses: rep.Missed, unplayed: len(rep.Unplayed)}
	}
	return nil
}
