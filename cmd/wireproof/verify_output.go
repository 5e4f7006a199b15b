package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/internal/objstore"
	"github.com/wireproof/wireproof/internal/spool"
	"github.com/wireproof/wireproof/verify"
)

// verifyOutput is where verify's runs go: a local directory, or a spool job
// uploaded to s3:// when the runs are over; and which runs are kept.
type verifyOutput struct {
	dir     string // what the runs write into
	keep    spool.Keep
	remote  *remoteDest
	removed map[string]bool // bundles --keep failed removed
	kept    bool            // the remote job stays pending (interrupted or failed)
}

func startOutput(ctx context.Context, o verifyOptions, keep spool.Keep, stderr io.Writer) (*verifyOutput, error) {
	out := &verifyOutput{dir: o.out, keep: keep}
	if !objstore.IsRemote(o.out) {
		return out, nil
	}
	r, err := beginUpload(ctx, o.out, keep, "verify", stderr)
	if err != nil {
		return nil, err
	}
	out.remote, out.dir = r, r.job.Dir()
	if err := out.checkFree(ctx, o); err != nil {
		out.release()
		return nil, err
	}
	return out, nil
}

// checkFree refuses a destination that already holds a bundle this run
// would write, before anything runs: evidence is never overwritten.
func (out *verifyOutput) checkFree(ctx context.Context, o verifyOptions) error {
	objs, err := out.remote.client.List(ctx, out.remote.dest.Bucket, out.remote.dest.Dir())
	if err != nil {
		return storageError{err}
	}
	have := make([]string, len(objs))
	for i, obj := range objs {
		have[i] = strings.TrimPrefix(obj.Key, out.remote.dest.Dir())
	}
	scenarios := verify.Scenarios
	if sc := assert.Scenario(o.scenario); sc != verify.ScenarioAll {
		scenarios = []assert.Scenario{sc}
	}
	first, last := 1, o.repeat
	if assert.Scenario(o.scenario) != verify.ScenarioAll && o.repeat == 1 {
		first, last = o.iteration, o.iteration
	}
	// What the prefix holds, not every name the runs would write: the
	// check costs the listing, whatever --repeat is.
	if name := verify.FirstClash(have, scenarios, first, last); name != "" {
		return outputError{o.out, fmt.Errorf("it already holds %s, and a bundle is never overwritten: choose another prefix", name)}
	}
	return nil
}

// release lets go of a remote job that was not sent; one that holds no
// file (the run never started) is removed.
func (out *verifyOutput) release() {
	if out.remote == nil {
		return
	}
	j := out.remote.job
	if _, err := os.Stat(j.Manifest()); err != nil {
		return // sent
	}
	if !out.kept {
		if entries, err := os.ReadDir(j.Dir()); err == nil && len(entries) == 0 {
			j.Done()
			return
		}
	}
	j.Release()
}

// finish applies --keep and, for s3://, uploads the runs' files. An
// interrupted run's files stay in the spool for 'wireproof upload'.
func (out *verifyOutput) finish(ctx context.Context, interrupted bool, stdout io.Writer) error {
	if interrupted && out.remote != nil {
		out.kept = true
		fmt.Fprintf(stdout, "Interrupted: the run's files are kept in %s; 'wireproof upload' sends them to %s\n", out.dir, out.remote.dest)
		return nil
	}
	removed, err := spool.Prune(ctx, out.dir, out.keep)
	if err != nil {
		return err
	}
	out.removed = map[string]bool{}
	for _, b := range removed {
		out.removed[b] = true
	}
	if len(removed) > 0 {
		fmt.Fprintf(stdout, "Not kept (--keep failed): %d passing run(s)\n", len(removed))
	}
	if out.remote == nil {
		return nil
	}
	if err := out.remote.finish(ctx, stdout); err != nil {
		out.kept = true
		return err
	}
	return nil
}

// shown is how a path under the output is named: its s3:// URL once
// uploaded, and marked when --keep failed removed it.
func (out *verifyOutput) shown(path string) string {
	name := out.located(path)
	if out.removed[path] {
		name += " (not kept: passed)"
	}
	return name
}

// located is where a path under the output ends up: its s3:// URL once
// uploaded, else the path.
func (out *verifyOutput) located(path string) string {
	if path == "" || out.remote == nil || out.kept {
		return path
	}
	rel, err := filepath.Rel(out.dir, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	if rel == "." {
		return out.remote.dest.String()
	}
	return out.remote.dest.Join(filepath.ToSlash(rel)).String()
}
