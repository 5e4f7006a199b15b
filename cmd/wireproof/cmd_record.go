package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/redact"
	"github.com/wireproof/wireproof/t3"
)

// proxyURLEnv tells a recorded command where the recording proxy listens.
const proxyURLEnv = "WIREPROOF_PROXY_URL"

type recordOptions struct {
	upstream string
	listen   string
	output   string
	redact   []string
	// tokenFields are field names whose values are credentials, beyond
	// t3.TokenFields (which hold redact.DefaultTokenFields).
	tokenFields []string
	bodyCap     int64
	stdio       bool // tap the command's stdin and stdout as NDJSON lines

	command []string  // the command after --, if any
	stdout  io.Writer // the proxy URL, alone, for scripts
	stderr  io.Writer // the human-readable banner
}

// newRecordCommand builds `wireproof record`.
func newRecordCommand(g *globalOptions) *cobra.Command {
	var opts recordOptions
	cmd := &cobra.Command{
		Use:   "record [--upstream URL] [--listen ADDR] [--stdio] -o FILE [--redact SECRET]... [--token-field NAME]... [--body-cap N] [-- COMMAND ARGS...]",
		Short: "Record the traffic to a server through a recording proxy",
		Long: `record starts a recording reverse proxy in front of --upstream and writes every
HTTP exchange and WebSocket message through it into the bundle -o FILE.

Without a command it prints the proxy's URL on stdout (and a banner on
stderr), records until SIGINT or SIGTERM and then closes the bundle cleanly.
With a command after --, it runs the command with WIREPROOF_PROXY_URL set to
that URL, stops recording when the command exits and exits with the
command's status; stdout is the command's alone (the URL is in the banner on
stderr). A command that cannot be started (not found, not executable) exits
127 and leaves no bundle.

With --stdio the command's stdin and stdout are recorded too, line by line, as
the NDJSON of a stdio protocol (a provider process speaking JSON-RPC 2.0, for
example), between the process's start (its command line) and exit: put
wireproof in front of such a process where its parent starts it. The lines
pass through unchanged. --upstream may then be left out.

Credentials (Authorization, X-Api-Key, cookies, token and ticket fields) and every
--redact string are replaced by [REDACTED] before anything is written. The
token fields are the OAuth ones (access_token, refresh_token, id_token,
subject_token, token) and T3's (wsTicket, ticket, desktopBootstrapToken);
--token-field NAME adds a query parameter, form field or JSON field whose
value is a credential: that value is redacted where it stands and wherever
else it occurs, in any spelling. Names match case-insensitively.

-o s3://bucket/prefix/run.zst records into a local spool file and uploads it
when the recording ends; if the upload fails the file stays in the spool, the
message says where, the exit status is 5, and 'wireproof upload' sends it.`,
		Example: `  wireproof record --upstream http://127.0.0.1:3773 -o run.zst -- ./drive.sh
  wireproof record --upstream http://127.0.0.1:3773 -o run.zst > proxy-url &
  wireproof record --stdio -o provider.zst -- codex app-server`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 && len(args) > 0 || dash > 0 {
				return usageError{fmt.Errorf("unexpected argument %q: put the command to run after --", args[0])}
			}
			opts.command = args
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runRecord(cmd.Context(), opts, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.upstream, "upstream", "", "the server to record (http:// or https:// URL)")
	f.StringVar(&opts.listen, "listen", "127.0.0.1:0", "address the recording proxy listens on")
	outFlag(f, &opts.output, "the bundle to write, a file or an s3://bucket/key object (must not exist)")
	f.StringArrayVar(&opts.redact, "redact", nil, "a secret to replace by [REDACTED] wherever it occurs (repeatable)")
	f.StringArrayVar(&opts.tokenFields, "token-field", nil, "a query, form or JSON field whose values are credentials, beyond the built-in ones (repeatable)")
	f.Int64Var(&opts.bodyCap, "body-cap", record.DefaultBodyCap, "bytes recorded per HTTP body; the rest is relayed but not recorded")
	f.BoolVar(&opts.stdio, "stdio", false, "also record the command's stdin and stdout as NDJSON lines")
	aliasFlags(f, map[string]string{"output": "out"}) // --output before the grammar was one
	f.SetInterspersed(false)
	return cmd
}

// runRecord records until the command exits or the context ends.
func runRecord(ctx context.Context, opts recordOptions, args []string) error {
	if opts.stdout == nil {
		opts.stdout = os.Stdout
	}
	if opts.stderr == nil {
		opts.stderr = os.Stderr
	}
	opts.command = args
	if opts.stdio && len(opts.command) == 0 {
		return usageError{errors.New("--stdio records a command's stdin and stdout: put the command after --")}
	}
	var upstream *url.URL
	if opts.upstream != "" || !opts.stdio {
		var err error
		if upstream, err = parseUpstream(opts.upstream); err != nil {
			return usageError{err}
		}
	}
	if opts.output == "" {
		return usageError{errors.New("missing -o FILE: the bundle to write")}
	}
	for _, f := range opts.tokenFields {
		if !redact.IsTokenFieldName(f) {
			return usageError{fmt.Errorf("--token-field %q: a field name is letters, digits, _ and -", f)}
		}
	}
	if opts.bodyCap <= 0 {
		return usageError{fmt.Errorf("--body-cap %d: must be a positive number of bytes", opts.bodyCap)}
	}
	if len(opts.command) > 0 {
		// Nothing is created for a command that cannot run.
		if _, err := exec.LookPath(opts.command[0]); err != nil {
			fmt.Fprintf(opts.stderr, "wireproof: cannot run %s: %v\n", opts.command[0], err)
			return exitStatusError{code: 127}
		}
	}

	local, remote, err := recordTarget(ctx, opts.output, opts.stderr)
	if err != nil {
		return err
	}
	if remote != nil {
		defer remote.job.Release()
	}
	w, err := bundle.Create(local, bundle.Header{
		Tool:     "wireproof " + version,
		Started:  time.Now(),
		Manifest: recordManifest(opts),
	}, nil)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return existsError(opts.output, "file")
		}
		return outputError{opts.output, err}
	}
	secrets := opts.redact
	if p := redact.URLPassword(upstream); p != "" {
		// The upstream's password is a secret wherever it shows up.
		secrets = append(slices.Clip(secrets), p)
	}
	rec := record.New(w, &record.Options{Redact: secrets, TokenFields: opts.allTokenFields(), BodyCap: opts.bodyCap, File: local})
	var srv *record.Server
	if upstream != nil {
		proxy, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: upstream})
		if err != nil {
			rec.Close()
			os.Remove(local)
			return usageError{err}
		}
		if srv, err = record.Listen(ctx, opts.listen, proxy); err != nil {
			rec.Close()
			os.Remove(local)
			return usageError{fmt.Errorf("--listen %s: %w", opts.listen, err)}
		}
		fmt.Fprintf(opts.stderr, "wireproof: recording %s -> %s into %s\n", srv.URL, rec.Redact(redact.Text(upstream.String(), nil)), opts.output)
		if len(opts.command) == 0 {
			// With a command stdout is the command's (with --stdio its
			// protocol stream); the URL is in the banner and its environment.
			fmt.Fprintln(opts.stdout, srv.URL)
		}
	} else {
		fmt.Fprintf(opts.stderr, "wireproof: recording the stdio of %s into %s\n", opts.command[0], opts.output)
	}

	var runErr error
	if len(opts.command) > 0 {
		proxyURL := ""
		if srv != nil {
			proxyURL = srv.URL
		}
		runErr = runRecorded(ctx, opts, rec, proxyURL)
	} else {
		<-ctx.Done()
	}
	if err := stopRecording(srv, rec, opts.output); err != nil {
		return errors.Join(err, runErr)
	}
	var notStarted notStartedError
	if errors.As(runErr, &notStarted) {
		// The command passed LookPath but could not start: a bundle of
		// nothing is not kept.
		if remote != nil {
			remote.job.Done()
		} else {
			os.Remove(local)
		}
		return notStarted.exitStatusError
	}
	if err := finishRecord(ctx, remote, opts.stderr); err != nil {
		return err
	}
	return runErr
}

// stopRecording closes the proxy (ending open WebSocket connections) and then
// the bundle. Streamed responses still running get a few seconds to end.
func stopRecording(srv *record.Server, rec *record.Recorder, output string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var serr error
	if srv != nil {
		serr = srv.Close(ctx)
		if errors.Is(serr, context.DeadlineExceeded) {
			serr = nil // streams cut at the deadline are recorded as such
		}
	}
	var cerr error
	if err := rec.Close(); err != nil {
		cerr = outputError{output, err}
	}
	return errors.Join(serr, cerr)
}

// runRecorded runs the command with the proxy URL in its environment (and
// with --stdio its stdin and stdout tapped) and returns its exit status as an
// error.
//
// Without --stdio the command runs in a process group of its own that dies
// with wireproof, even on SIGKILL, and whatever it leaves running when it
// exits is killed (record.Group). On a terminal its group is the foreground
// job, so ^C goes to it as it would without wireproof; a SIGINT or SIGTERM
// sent to wireproof itself is passed on to the group. With --stdio the
// command's stdin is the tap, not the terminal: it runs in a group of its own
// too (record.TapCommand), which the tap kills when wireproof is interrupted.
// Either way wireproof waits for the command to exit.
func runRecorded(ctx context.Context, opts recordOptions, rec *record.Recorder, proxyURL string) error {
	cmd := exec.Command(opts.command[0], opts.command[1:]...)
	cmd.Env = os.Environ()
	if proxyURL != "" {
		cmd.Env = append(cmd.Env, proxyURLEnv+"="+proxyURL)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Which signal ended ctx, to pass the same one on.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	var group *record.Group
	if opts.stdio {
		go func() {
			// The channel's process, as verify records a provider's: its
			// argv says what it speaks (a codex app-server's JSON-RPC
			// dialect), its exit ends the calls it left open.
			attrs, _ := json.Marshal(map[string][]string{"argv": redactedCommand(opts)})
			_, _ = rec.Emit(&bundle.Event{Kind: bundle.KindProcStart, Conn: stdioConn, Attrs: attrs})
			err := record.TapCommand(ctx, rec, stdioConn, cmd)
			if ps := cmd.ProcessState; ps != nil {
				exit := &bundle.Event{Kind: bundle.KindProcExit, Conn: stdioConn, Code: ps.ExitCode()}
				if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					exit.Code, exit.Name = -1, record.SignalName(ws.Signal())
				}
				_, _ = rec.Emit(exit)
			}
			done <- err
		}()
	} else {
		var err error
		if group, err = record.StartGroup(cmd); err != nil {
			fmt.Fprintf(opts.stderr, "wireproof: cannot run %s: %v\n", opts.command[0], err)
			return notStartedError{exitStatusError{code: 127}}
		}
		go func() { done <- group.Wait() }()
	}
	interrupted := false
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		interrupted = true
		if group != nil { // TapCommand ends the command itself when ctx ends
			sig := syscall.SIGTERM // ctx ended without a signal
			select {
			case s := <-sigs:
				sig = s.(syscall.Signal)
			case <-time.After(50 * time.Millisecond):
				// A signal comes to sigs as it comes to ctx; this
				// bounds the wait for a context ended otherwise.
			}
			group.Signal(sig)
		}
		err = <-done
	}
	if opts.stdio && err != nil && cmd.Process == nil { // TapCommand could not start it
		fmt.Fprintf(opts.stderr, "wireproof: cannot run %s: %v\n", opts.command[0], err)
		return notStartedError{exitStatusError{code: 127}}
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		return fmt.Errorf("waiting for %s: %w", opts.command[0], err)
	}
	if interrupted {
		return interruptedError{ctx.Err()}
	}
	if code != 0 {
		return exitStatusError{code: code}
	}
	return nil
}

// notStartedError is a command that could not be started: exit 127, and
// the bundle, which holds nothing of it, is removed.
type notStartedError struct{ exitStatusError }

// parseUpstream checks --upstream: an absolute http or https URL with a host.
func parseUpstream(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("missing --upstream URL: the server to record")
	}
	shown := redact.Text(s, nil) // an error never shows the userinfo's password
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL whole
		}
		return nil, fmt.Errorf("--upstream %q: %w", shown, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("--upstream %q: must be an http:// or https:// URL", shown)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("--upstream %q: has no host", shown)
	}
	return u, nil
}

// allTokenFields are the field names whose values the recording redacts:
// T3's, the generic ones among them (wireproof records T3 servers most of
// all), and those of --token-field.
func (o recordOptions) allTokenFields() []string {
	return slices.Concat(t3.TokenFields, o.tokenFields)
}

// recordManifest says what was recorded. Secrets never enter it: --redact
// values are counted, not listed, and the command line is redacted.
func recordManifest(opts recordOptions) bundle.Manifest {
	m := bundle.Manifest{Options: map[string]string{
		"upstream": redact.Text(opts.upstream, &redact.Options{Secrets: opts.redact, TokenFields: opts.allTokenFields()}),
		"listen":   opts.listen,
		"body-cap": strconv.FormatInt(opts.bodyCap, 10),
	}}
	if opts.stdio {
		m.Options["stdio"] = "true"
	}
	if len(opts.tokenFields) > 0 {
		m.Options["token-fields"] = strings.Join(opts.tokenFields, ",")
	}
	if len(opts.redact) > 0 {
		m.Options["redact"] = strconv.Itoa(len(opts.redact)) + " secrets"
	}
	if len(opts.command) > 0 {
		m.Commands = [][]string{redactedCommand(opts)}
	}
	return m
}

// stdioConn is the channel of the command's stdio (--stdio).
const stdioConn = "stdio"

// redactedCommand is the command line as the bundle holds it: --redact
// values and token fields' values redacted.
func redactedCommand(opts recordOptions) []string {
	cmd := make([]string, len(opts.command))
	for i, a := range opts.command {
		cmd[i] = redact.Text(a, &redact.Options{Secrets: opts.redact, TokenFields: opts.allTokenFields()})
	}
	return cmd
}
