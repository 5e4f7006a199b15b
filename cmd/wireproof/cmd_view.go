package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/view"
)

// viewOptions are the flags of `wireproof view`.
type viewOptions struct {
	Listen string // host:port; the default is loopback on a free port
	Open   bool   // open the URL in the desktop's browser

	stdout, stderr io.Writer
	// ready, if set, receives the URL once the server listens (tests).
	ready func(url string)
}

// newViewCommand builds `wireproof view`.
func newViewCommand(g *globalOptions) *cobra.Command {
	var opts viewOptions
	cmd := &cobra.Command{
		Use:   "view [--listen ADDR] [--open] BUNDLE|DIR|s3://BUCKET/PREFIX...",
		Short: "Browse bundles in an interactive viewer in the browser",
		Long: `view starts a local web server with an interactive evidence viewer and prints
its URL. Everything it serves is embedded: it needs no network and works offline.

  corpus   one row per bundle, listed as 'wireproof replay' and 'wireproof
           index' list them (every *.zst under a directory, kept workspaces
           *.work skipped; a suite's results.json adds each run's status):
           scenario, status, failing check, reproduced or diverged,
           duration, revision; sort and filter; the failure rate per scenario
           and per check across repeats
  bundle   a trace viewer: a waterfall per channel (server, HTTP, each
           WebSocket and its RPC calls, gate, marks, the parent thread's
           observations) with zoom and pan, the event list with filters and
           search, details of any event or call (headers, JSON bodies as a
           tree, cause chains, binary as hex), the failing event focused on
           open, deep links (/b/ID?seq=N)
  projection  the parent thread as replay saw it at any point, and what
           changed since the observation before; step with [ and ]
  diff     two bundles' stories side by side, aligned as wireproof diff aligns
           them, the divergence highlighted

Verdicts come from the same replay as 'wireproof replay'. The pages use a small
JSON API that scripts can use too (/api/bundles, /api/bundle/ID/events, ...;
see the package documentation of view).

An s3:// argument (one object, or every bundle under a prefix) is copied to a
temporary directory first, removed when the viewer stops.

--listen defaults to 127.0.0.1 on a free port. Stop with Ctrl-C or SIGTERM
(exit 0). Exit 3 for a path that does not exist, 2 for other bad arguments (a
directory without bundles, a bad --listen), as in replay and index.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runView(cmd.Context(), opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Listen, "listen", "127.0.0.1:0", "listen on `ADDR` (host:port)")
	f.BoolVar(&opts.Open, "open", false, "open the viewer in the default browser")
	return cmd
}

func runView(ctx context.Context, opts viewOptions, args []string) (err error) {
	if opts.stdout == nil {
		opts.stdout, opts.stderr = os.Stdout, os.Stderr
	}
	if len(args) == 0 {
		return usageError{errors.New("view takes at least one BUNDLE or DIR")}
	}
	args, f, err := fetchBundles(ctx, args)
	if err != nil {
		return err
	}
	defer f.done(&err)
	srcs, err := view.Resolve(args, &view.ResolveOptions{Warn: func(err error) {
		fmt.Fprintf(opts.stderr, "wireproof view: %v (its bundles are shown without the suite's status)\n", err)
	}})
	if err != nil {
		return listError(err)
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: %w", opts.Listen, err)}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{Handler: view.New(ctx, srcs, &view.Options{Args: args}), ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintln(opts.stdout, url)
	fmt.Fprintf(opts.stderr, "wireproof view: %d bundle(s) at %s (Ctrl-C stops)\n", len(srcs), url)
	if opts.ready != nil {
		opts.ready(url)
	}
	if opts.Open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(opts.stderr, "wireproof view: could not open a browser (%v); open %s yourself\n", err, url)
		}
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shut, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	cancel()
	if err := srv.Shutdown(shut); err != nil {
		srv.Close()
	}
	<-served
	return nil
}

// openBrowser asks the desktop to open url.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
