package spool

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/internal/bundleindex"
	"github.com/wireproof/wireproof/internal/objstore"
)

// Sent is one file stored.
type Sent struct {
	File string // the local path it was read from (now removed)
	URL  string
}

// Send applies the job's retention (Prune), uploads every file of the job
// to its destination (see Upload), removes each local file once it is
// stored and verified, and the job when all are. On error the files not yet
// stored stay in the job, which stays pending; the job's lock is released
// either way.
func Send(ctx context.Context, c *objstore.Client, j *Job, each func(Sent)) ([]Sent, error) {
	defer j.Release()
	dest, err := objstore.ParseURL(j.Dest)
	if err != nil {
		return nil, err
	}
	if _, err := Prune(ctx, j.dir, j.Keep); err != nil {
		return nil, err
	}
	sent, err := upload(ctx, c, j.dir, dest, true, each)
	if err != nil {
		return sent, err
	}
	return sent, j.Done()
}

// SuiteLock is the file a verify suite holds locked in its output
// directory while it writes there (internal/filelock). It is no evidence:
// Upload passes over it.
const SuiteLock = ".wireproof-verify.lock"

// Upload copies every file under dir to dest, keeping their paths relative
// to dir (but a suite's lock file, SuiteLock): bundles with metadata and
// tags from their verdict (Meta), and never over an object that holds
// other bytes. The local files stay.
func Upload(ctx context.Context, c *objstore.Client, dir string, dest objstore.URL, each func(Sent)) ([]Sent, error) {
	return upload(ctx, c, dir, dest, false, each)
}

func upload(ctx context.Context, c *objstore.Client, dir string, dest objstore.URL, remove bool, each func(Sent)) ([]Sent, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && d.Name() != SuiteLock {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var sent []Sent
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		u := dest.Join(filepath.ToSlash(rel))
		if err := PutFile(ctx, c, f, u); err != nil {
			return sent, err
		}
		if remove {
			os.Remove(f)
		}
		s := Sent{File: f, URL: u.String()}
		sent = append(sent, s)
		if each != nil {
			each(s)
		}
	}
	return sent, nil
}

// PutFile uploads one file to u, never over other bytes; a bundle carries
// Meta as its object metadata and tags.
func PutFile(ctx context.Context, c *objstore.Client, file string, u objstore.URL) error {
	up := &objstore.Upload{NoOverwrite: true}
	if strings.HasSuffix(file, objstore.BundleExt) {
		up.ContentType = "application/zstd"
		if meta, err := Meta(ctx, file); err == nil {
			up.Meta, up.Tags = meta, meta
		}
	}
	return c.Put(ctx, u, file, up)
}

// Meta is what an uploaded bundle's object metadata and tags carry:
// scenario, status, check (the failing one), revision, provider, model and
// iteration, from the bundle's header and recorded verdict. Empty values are
// left out.
func Meta(ctx context.Context, bundlePath string) (map[string]string, error) {
	e, err := summarizeFile(ctx, bundlePath)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for k, v := range map[string]string{
		"scenario": e.Scenario, "status": string(e.Status), "check": e.Check, "revision": e.Revision,
		"provider": e.Provider, "model": e.Model,
	} {
		if v != "" {
			m[k] = v
		}
	}
	if e.Iteration > 0 {
		m["iteration"] = strconv.Itoa(e.Iteration)
	}
	return m, nil
}

func summarizeFile(ctx context.Context, path string) (bundleindex.Entry, error) {
	f, err := objstore.OpenFile(path)
	if err != nil {
		return bundleindex.Entry{}, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	return bundleindex.Summarize(ctx, path, f, size)
}

// Prune applies a retention to an output directory: with KeepFailed the
// bundles whose recorded verdict passed are removed, with their verdict
// files and kept workspaces (<name>.verdict.json, <name>.work). A bundle
// without a verdict (a killed run) or unreadable is kept. It returns the
// bundles removed.
func Prune(ctx context.Context, dir string, keep Keep) ([]string, error) {
	if keep != KeepFailed {
		return nil, nil
	}
	bundles, err := filepath.Glob(filepath.Join(dir, "*"+objstore.BundleExt))
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, b := range bundles {
		e, err := summarizeFile(ctx, b)
		if err != nil {
			return removed, err
		}
		if e.Status != assert.StatusPassed {
			continue
		}
		name := strings.TrimSuffix(b, objstore.BundleExt)
		for _, p := range []string{b, name + ".verdict.json", name + ".work"} {
			if err := os.RemoveAll(p); err != nil {
				return removed, err
			}
		}
		removed = append(removed, b)
	}
	return removed, nil
}
