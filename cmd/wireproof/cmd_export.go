package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/triage"
)

// exportOptions are the flags of `wireproof export`.
type exportOptions struct {
	Out   string // the HAR file to write (-o, or --har as before)
	Force bool   // write it even over a bundle

	stdout, stderr io.Writer
}

// newExportCommand builds `wireproof export`.
func newExportCommand(g *globalOptions) *cobra.Command {
	var opts exportOptions
	cmd := &cobra.Command{
		Use:   "export -o OUT.har BUNDLE|s3://BUCKET/KEY",
		Short: "Export a bundle's HTTP and WebSocket traffic as a HAR file",
		Long: `export -o OUT.har writes the HTTP exchanges and WebSocket connections of a bundle as
a HAR 1.2 file that browser developer tools and HAR viewers open. WebSocket
messages are in each connection's _webSocketMessages, as Chrome writes them.
Times are the recording's start plus each event's offset. Values redacted in the
bundle stay redacted.

HAR is the only export format; --har OUT.har, its older spelling, is the same
as -o OUT.har.

A truncated bundle is exported up to its cut, with a notice; exit 0. A file that
is missing, not a bundle, or broken before its end exits 3; one whose stored
bytes are not what its writer wrote is damaged and exits 7.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runExport(cmd.Context(), opts, args)
		},
	}
	outFlag(cmd.Flags(), &opts.Out, "write a HAR 1.2 file to `OUT.har`")
	aliasFlags(cmd.Flags(), map[string]string{"har": "out"}) // export --har OUT.har before the grammar was one
	forceFlag(cmd.Flags(), &opts.Force)
	return cmd
}

func runExport(ctx context.Context, opts exportOptions, args []string) (err error) {
	if opts.stdout == nil {
		opts.stdout, opts.stderr = os.Stdout, os.Stderr
	}
	if len(args) != 1 {
		return usageError{errors.New("export takes exactly one BUNDLE")}
	}
	if opts.Out == "" {
		return usageError{errors.New("export needs -o OUT.har (or --har OUT.har): HAR is the only export format")}
	}
	if err := notDirectories("export", args); err != nil {
		return err
	}
	if err := refuseBundle(opts.Out, opts.Force, args); err != nil {
		return err
	}
	args, f, err := fetchBundles(ctx, args)
	if err != nil {
		return err
	}
	defer f.done(&err)
	opts.stderr = f.writer(opts.stderr)
	tl, err := loadTimeline(ctx, args[0])
	if err != nil {
		return err
	}
	if err := writeFileAtomic(opts.Out, func(w io.Writer) error {
		return triage.WriteHAR(w, tl, &triage.HAROptions{Version: version})
	}); err != nil {
		return err
	}
	noteTruncated(opts.stderr, tl)
	printOutput(opts.stdout, opts.Out)
	return nil
}

// loadTimeline reads a bundle for the triage verbs and maps its errors to
// exit codes: interrupted, or unreadable.
func loadTimeline(ctx context.Context, path string) (*triage.Timeline, error) {
	tl, err := triage.Load(ctx, path, nil)
	switch {
	case err == nil:
		return tl, nil
	case ctx.Err() != nil:
		return nil, interruptedError{err}
	default:
		return nil, unreadableError{err} // the bundle package's errors name the file
	}
}

// noteTruncated says on stderr that a bundle was cut, as inspect does.
func noteTruncated(w io.Writer, tl *triage.Timeline) {
	if tl.Truncated {
		fmt.Fprintf(w, "wireproof: %s is truncated (%s): written up to the cut\n", tl.Path, tl.TruncatedReason)
	}
}

// printOutput prints the path of the file an output was written to. An
// output that went into a pipe or a device (-o /dev/stdout) is not named
// after it: export -o /dev/stdout | jq reads the HAR alone.
func printOutput(w io.Writer, path string) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return
	}
	fmt.Fprintln(w, path)
}

// writeFileAtomic writes path through a temporary file in the same directory
// and renames it into place, so a failed write leaves no half file. A path
// that names something other than a regular file is not replaced: a
// directory is refused, a named pipe or a device (a shell's >(...),
// /dev/stdout) is written into, as the user asked, and a symbolic link to a
// file (/dev/stdout redirected to one) is followed: the file it points to is
// replaced, the link stays.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return outputError{path, errors.New("it is a directory")}
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return outputError{path, err}
		}
		if err := write(f); err != nil {
			f.Close()
			return outputError{path, err}
		}
		if err := f.Close(); err != nil {
			return outputError{path, err}
		}
		return nil
	}
	target := path
	if li, err := os.Lstat(path); err == nil && li.Mode()&os.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return outputError{path, err}
		}
	}
	dir, base := ".", target
	for i := len(target) - 1; i >= 0; i-- {
		if os.IsPathSeparator(target[i]) {
			dir, base = target[:i+1], target[i+1:]
			break
		}
	}
	f, err := os.CreateTemp(dir, "."+base+".*")
	if err != nil {
		return outputError{path, err}
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return outputError{path, err}
	}
	if err := f.Close(); err != nil {
		return outputError{path, err}
	}
	if err := os.Chmod(f.Name(), 0o600); err != nil { // bundles are 0600; what is taken out of them stays so
		return outputError{path, err}
	}
	if err := os.Rename(f.Name(), target); err != nil {
		return outputError{path, err}
	}
	return nil
}
