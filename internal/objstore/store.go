package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wireproof/wireproof/internal/regfile"
)

// BundleExt is the extension of a bundle file or object.
const BundleExt = ".zst"

// Location is where bundles are read from: a local file or directory, or an
// s3://bucket/prefix (one object, or every bundle under the prefix).
type Location struct {
	arg    string
	url    URL     // remote only
	client *Client // remote only
}

// Entry is one bundle of a Location.
type Entry struct {
	// Name is what messages call it: the local path or the s3:// URL.
	Name string
	// Rel is its slash-separated path relative to the location's root (the
	// directory or prefix; the file's base name for a single bundle), the
	// same for a corpus on disk and the same corpus uploaded.
	Rel  string
	Size int64

	url URL // remote only
}

// Remote reports whether the entry is in object storage.
func (e Entry) Remote() bool { return e.url.Bucket != "" }

// URL is the entry's object (zero for a local file).
func (e Entry) URL() URL { return e.url }

// NewLocation resolves arg: an s3:// URL (a client is made from opts) or a
// local path. Nothing is read yet.
func NewLocation(arg string, opts *Options) (*Location, error) {
	l := &Location{arg: arg}
	if !IsRemote(arg) {
		return l, nil
	}
	u, err := ParseURL(arg)
	if err != nil {
		return nil, err
	}
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	l.url, l.client = u, c
	return l, nil
}

// NewRemote is a Location for u on an existing client.
func NewRemote(c *Client, u URL) *Location { return &Location{arg: u.String(), url: u, client: c} }

// Remote reports whether the location is in object storage.
func (l *Location) Remote() bool { return l.client != nil }

// URL is the location's s3:// URL (zero for a local location).
func (l *Location) URL() URL { return l.url }

// Client is the location's client (nil for a local location).
func (l *Location) Client() *Client { return l.client }

// String is the argument as given.
func (l *Location) String() string { return l.arg }

// NoBundlesError is a directory or prefix that holds no bundle.
type NoBundlesError struct{ Where string }

func (e *NoBundlesError) Error() string { return "no *" + BundleExt + " bundles under " + e.Where }

// WorkspaceExt ends the name of a directory `verify --keep-workspace` keeps
// beside a bundle: the server's home, never evidence, so listings skip it.
const WorkspaceExt = ".work"

// Bundles lists the location's bundles sorted by Rel. A local file, or an
// s3:// URL naming one object, is a single bundle whatever its name; a
// directory or prefix yields every *.zst under it except what lies in a
// kept workspace (a directory named *.work). This is the one listing every
// verb that reads a directory or prefix uses (replay, index, view, ...), so
// they all list the same bundles in the same order. A missing local path is
// the *fs.PathError of os.Stat, a missing object named *.zst a not-found
// *Error; an empty directory or prefix is a *NoBundlesError.
func (l *Location) Bundles(ctx context.Context) ([]Entry, error) {
	if l.Remote() {
		return l.remoteBundles(ctx)
	}
	info, err := os.Stat(l.arg)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []Entry{{Name: l.arg, Rel: filepath.Base(l.arg), Size: info.Size()}}, nil
	}
	var found []Entry
	if err := walkBundles(l.arg, ".", map[string]bool{}, &found); err != nil {
		return nil, fmt.Errorf("walk %s: %w", l.arg, err)
	}
	if len(found) == 0 {
		return nil, &NoBundlesError{Where: l.arg}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Rel < found[j].Rel })
	return found, nil
}

// walkBundles adds the bundles under dir (shown as dir, rel to the listed
// root) to found. A symbolic link to a directory is followed, the root
// included, each real directory once (a link back up is no loop).
func walkBundles(dir, rel string, seen map[string]bool, found *[]Entry) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	if seen[real] {
		return nil
	}
	seen[real] = true
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, d := range entries {
		p, r := filepath.Join(dir, d.Name()), filepath.Join(rel, d.Name())
		info, err := os.Stat(p) // follows a link
		if err != nil {
			if d.Type()&fs.ModeSymlink != 0 {
				continue // a dangling link is nothing to list
			}
			return err
		}
		if info.IsDir() {
			if strings.HasSuffix(d.Name(), WorkspaceExt) {
				continue
			}
			if err := walkBundles(p, r, seen, found); err != nil {
				return err
			}
			continue
		}
		if strings.HasSuffix(d.Name(), BundleExt) && info.Mode().IsRegular() {
			*found = append(*found, Entry{Name: p, Rel: filepath.ToSlash(r), Size: info.Size()})
		}
	}
	return nil
}

func (l *Location) remoteBundles(ctx context.Context) ([]Entry, error) {
	var missing error // the object the URL names, not found
	if l.url.Key != "" && !strings.HasSuffix(l.url.Key, "/") {
		// One object, if there is one by that name.
		o, err := l.client.Stat(ctx, l.url)
		switch {
		case err == nil:
			return []Entry{{Name: l.url.String(), Rel: path.Base(l.url.Key), Size: o.Size, url: l.url}}, nil
		case !IsNotFound(err):
			return nil, err
		}
		missing = err
	}
	prefix := l.url.Dir()
	objs, err := l.client.List(ctx, l.url.Bucket, prefix)
	if err != nil {
		return nil, err
	}
	var found []Entry
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, prefix)
		if !strings.HasSuffix(o.Key, BundleExt) || inWorkspace(rel) {
			continue
		}
		u := URL{Bucket: l.url.Bucket, Key: o.Key}
		found = append(found, Entry{Name: u.String(), Rel: rel, Size: o.Size, url: u})
	}
	switch {
	case len(found) == 0 && missing != nil && strings.HasSuffix(l.url.Key, BundleExt):
		return nil, missing // a bundle's name: say it is not there
	case len(found) == 0:
		return nil, &NoBundlesError{Where: l.arg}
	}
	return found, nil
}

// inWorkspace reports whether a slash-separated relative path lies in a kept
// workspace (a directory named *.work).
func inWorkspace(rel string) bool {
	dirs := strings.Split(rel, "/")
	for _, d := range dirs[:len(dirs)-1] {
		if strings.HasSuffix(d, WorkspaceExt) {
			return true
		}
	}
	return false
}

// Open streams one bundle of the location.
func (l *Location) Open(ctx context.Context, e Entry) (io.ReadCloser, error) {
	if e.Remote() {
		return l.client.Open(ctx, e.url)
	}
	return OpenFile(e.Name)
}

// OpenFile opens a local file for reading, refusing what is not a regular
// file (a named pipe called run.zst would block the open until something
// writes to it; a device never ends) with an error naming it.
func OpenFile(path string) (*os.File, error) {
	f, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, fmt.Errorf("%w: bundles are read from regular files only", err)
	}
	return f, err
}
