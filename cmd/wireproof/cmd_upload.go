package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/internal/objstore"
	"github.com/wireproof/wireproof/internal/spool"
)

// uploadOptions are the flags of `wireproof upload`.
type uploadOptions struct {
	List bool

	stdout, stderr io.Writer
}

// newUploadCommand builds `wireproof upload`.
func newUploadCommand(g *globalOptions) *cobra.Command {
	var opts uploadOptions
	cmd := &cobra.Command{
		Use:   "upload [--list] | upload DIR|FILE... s3://BUCKET/PREFIX",
		Short: "Send runs left in the local spool to object storage, or copy bundles there",
		Long: `Without arguments, upload sends what runs writing to s3:// left in the local
spool: a run records into the spool ($WIREPROOF_SPOOL, default
~/.cache/wireproof/spool) and uploads its files when it ends; a run that was
killed, interrupted or could not upload leaves them there, with a manifest
naming the destination. Runs still writing are left alone. --list shows what
is pending.

With arguments, upload copies local bundles to a prefix: each FILE, and every
file under each DIR (bundles, verdicts, results.json) under its path relative
to DIR, as verify --out s3:// would have stored them.

Every bundle is stored with object metadata and tags (scenario, status, check,
revision, provider, model, iteration) taken from its header and recorded
verdict; files larger than 16 MiB go in parts; each object is checked against
the file's digest; failures are retried with backoff. An object that already
holds other bytes is never overwritten.

Exit status: 0 when everything was sent, 5 when object storage refused the
credentials, could not be reached, or an upload failed (the files stay where
they are), 7 when a bundle is damaged (it is uploaded as it is, tagged
status=damaged, and named), 2 for bad arguments.`,
		Example: `  wireproof upload
  wireproof upload --list
  wireproof upload ./evidence s3://evidence/nightly/2026-11-30`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return runUpload(cmd.Context(), opts, args)
		},
	}
	cmd.Flags().BoolVar(&opts.List, "list", false, "list the pending uploads and exit")
	return cmd
}

func runUpload(ctx context.Context, opts uploadOptions, args []string) error {
	if opts.stdout == nil {
		opts.stdout, opts.stderr = os.Stdout, os.Stderr
	}
	if len(args) == 1 {
		return usageError{errors.New("upload takes no argument (send the spool) or DIR|FILE... s3://BUCKET/PREFIX")}
	}
	if len(args) > 1 {
		if opts.List {
			return usageError{errors.New("--list takes no argument")}
		}
		return uploadPaths(ctx, opts, args[:len(args)-1], args[len(args)-1])
	}
	dir, err := spool.DefaultDir()
	if err != nil {
		return err
	}
	sp, err := spool.Open(dir)
	if err != nil {
		return err
	}
	if opts.List {
		return listPending(opts.stdout, sp)
	}
	c, err := objstore.New(nil)
	if err != nil {
		return usageError{err}
	}
	sent, failed := sendPending(ctx, sp, c, opts.stdout)
	switch {
	case ctx.Err() != nil:
		return interruptedError{ctx.Err()}
	case len(failed) > 0:
		return storageError{fmt.Errorf("%d pending upload(s) failed and are kept in %s: %w", len(failed), dir, errors.Join(failed...))}
	}
	fmt.Fprintf(opts.stdout, "%d file(s) sent; nothing pending in %s\n", sent, dir)
	return nil
}

// listPending prints one line per pending job: id, destination, files, age.
func listPending(w io.Writer, sp *spool.Spool) error {
	jobs, skipped := sp.Pending()
	for _, e := range skipped {
		fmt.Fprintln(w, "wireproof:", e)
	}
	for _, j := range jobs {
		n := 0
		if entries, err := os.ReadDir(j.Dir()); err == nil {
			n = len(entries)
		}
		fmt.Fprintf(w, "%s  %s  %d file(s)  %s ago  (%s, keep %s)\n", j.Dir(), j.Dest, n, time.Since(j.Created).Round(time.Second), j.Command, j.Keep)
		j.Release()
	}
	fmt.Fprintf(w, "%d pending upload(s) in %s\n", len(jobs), sp.Dir)
	return nil
}

// uploadPaths copies local files and directories to a prefix.
func uploadPaths(ctx context.Context, opts uploadOptions, paths []string, dest string) error {
	if !objstore.IsRemote(dest) {
		return usageError{fmt.Errorf("the last argument must be the destination, s3://BUCKET/PREFIX; got %q", dest)}
	}
	u, err := objstore.ParseURL(dest)
	if err != nil {
		return usageError{err}
	}
	for _, p := range paths {
		if objstore.IsRemote(p) {
			return usageError{fmt.Errorf("%s: upload copies local files; only the last argument is in object storage", p)}
		}
		if _, err := os.Stat(p); err != nil {
			return unreadableError{err}
		}
	}
	c, err := objstore.New(nil)
	if err != nil {
		return usageError{err}
	}
	if err := c.CheckBucket(ctx, u.Bucket); err != nil {
		return storageError{err}
	}
	damaged := damagedBundles(ctx, paths)
	total := 0
	for _, p := range paths {
		info, _ := os.Stat(p)
		var sent []spool.Sent
		if info.IsDir() {
			sent, err = spool.Upload(ctx, c, p, u, nil)
		} else {
			sent, err = uploadFile(ctx, c, p, u)
		}
		total += len(sent)
		if err != nil {
			if ctx.Err() != nil {
				return interruptedError{err}
			}
			return storageError{fmt.Errorf("%w (%d file(s) sent before it)", err, total)}
		}
	}
	fmt.Fprintf(opts.stdout, "%d file(s) uploaded to %s\n", total, strings.TrimSuffix(u.String(), "/"))
	if len(damaged) > 0 {
		// Uploaded as they are, tagged status=damaged: evidence is kept,
		// and the verb says what it is.
		return damagedError{fmt.Errorf("uploaded, but %d bundle(s) are damaged (tagged status=damaged): %s", len(damaged), strings.Join(damaged, ", "))}
	}
	return nil
}

// damagedBundles returns the bundles among paths (files, and the *.zst
// files under directories) whose stored bytes are damaged, as their index
// entry says.
func damagedBundles(ctx context.Context, paths []string) []string {
	var out []string
	for _, root := range paths {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, objstore.BundleExt) {
				return nil
			}
			if m, err := spool.Meta(ctx, p); err == nil && m["status"] == string(assert.StatusDamaged) {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

func uploadFile(ctx context.Context, c *objstore.Client, file string, dest objstore.URL) ([]spool.Sent, error) {
	u := dest.Join(filepath.Base(file))
	if err := spool.PutFile(ctx, c, file, u); err != nil {
		return nil, err
	}
	return []spool.Sent{{File: file, URL: u.String()}}, nil
}
