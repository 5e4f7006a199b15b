package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/wireproof/wireproof/internal/objstore"
	"github.com/wireproof/wireproof/internal/spool"
)

// This file is where the verbs turn an argument into a bundle location:
// a local path as before, or s3://bucket/prefix.

// storageError is object storage that could not be used: credentials
// refused, the endpoint unreachable, or an upload that failed (the local
// files are kept, and the message says where).
type storageError struct{ err error }

func (e storageError) Error() string { return e.err.Error() }
func (e storageError) Unwrap() error { return e.err }

// openLocation resolves a BUNDLE|DIR|s3:// argument.
func openLocation(arg string) (*objstore.Location, error) {
	l, err := objstore.NewLocation(arg, nil)
	if err != nil {
		return nil, usageError{err}
	}
	return l, nil
}

// listBundles lists a location's bundles, mapping errors to exit codes: a
// missing path or object is unreadable, an empty directory a usage error,
// a refused credential or an unreachable endpoint a storage error.
func listBundles(ctx context.Context, l *objstore.Location) ([]objstore.Entry, error) {
	entries, err := l.Bundles(ctx)
	if err != nil {
		return nil, listError(err)
	}
	return entries, nil
}

// listError maps an error of objstore.Location.Bundles to its exit code, for
// every verb that lists bundles (view lists through view.Resolve).
func listError(err error) error {
	var none *objstore.NoBundlesError
	var pe *fs.PathError
	switch {
	case errors.As(err, &none):
		return usageError{err}
	case errors.As(err, &pe), errors.Is(err, fs.ErrNotExist), objstore.IsNotFound(err):
		return unreadableError{err}
	}
	return storageError{err}
}

// fetchBundles gives each s3:// argument a local copy (in a temporary
// directory: an object under its own name, a prefix as a directory of its
// bundles) for the verbs that read a bundle more than once or at random;
// other arguments are returned as they
// are. The fetched's done removes the copies and, in *err and in what went
// through its writers, writes each URL back where its copy's path was, so
// messages name what the user gave.
func fetchBundles(ctx context.Context, args []string) (local []string, f *fetched, err error) {
	local = append([]string(nil), args...)
	f = &fetched{names: map[string]string{}}
	for i, arg := range args {
		if !objstore.IsRemote(arg) {
			continue
		}
		if local[i], err = f.fetch(ctx, i, arg); err != nil {
			f.done(nil)
			return nil, nil, err
		}
	}
	return local, f, nil
}

// fetched are local copies of objects.
type fetched struct {
	tmp     string
	names   map[string]string // local path -> URL
	writers []*renamingWriter
}

// fetch copies what arg names: one object to a file, or every bundle under
// a prefix into a directory (their paths relative to the prefix kept).
func (f *fetched) fetch(ctx context.Context, i int, arg string) (string, error) {
	loc, err := openLocation(arg)
	if err != nil {
		return "", err
	}
	entries, err := listBundles(ctx, loc)
	if err != nil {
		return "", err
	}
	if f.tmp == "" {
		if f.tmp, err = os.MkdirTemp("", "wireproof-s3-"); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(f.tmp, fmt.Sprint(i))
	local := dir
	if u := loc.URL(); len(entries) == 1 && entries[0].URL() == u {
		local = filepath.Join(dir, path.Base(u.Key)) // the argument is the object
	}
	f.names[local] = arg
	for _, e := range entries {
		dst := filepath.Join(dir, filepath.FromSlash(e.Rel))
		if local != dir {
			dst = local
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return "", err
		}
		if err := loc.Client().Download(ctx, e.URL(), dst); err != nil {
			if objstore.IsNotFound(err) {
				return "", unreadableError{err}
			}
			return "", storageError{err}
		}
	}
	return local, nil
}

// writer wraps w so that the copies' paths read as their URLs.
func (f *fetched) writer(w io.Writer) io.Writer {
	if len(f.names) == 0 {
		return w
	}
	rw := &renamingWriter{w: w, r: f.replacer()}
	f.writers = append(f.writers, rw)
	return rw
}

func (f *fetched) replacer() *strings.Replacer {
	var pairs []string
	for local, url := range f.names {
		pairs = append(pairs, local, url)
	}
	return strings.NewReplacer(pairs...)
}

// done flushes the writers, removes the copies and renames them in *errp.
func (f *fetched) done(errp *error) {
	for _, w := range f.writers {
		w.flush()
	}
	if f.tmp != "" {
		os.RemoveAll(f.tmp)
	}
	if errp != nil && *errp != nil && len(f.names) > 0 {
		*errp = renamedError{*errp, f.replacer()}
	}
}

// renamingWriter applies a replacer to whole lines on their way to w.
type renamingWriter struct {
	w   io.Writer
	r   *strings.Replacer
	buf []byte
}

func (rw *renamingWriter) Write(p []byte) (int, error) {
	rw.buf = append(rw.buf, p...)
	if i := bytes.LastIndexByte(rw.buf, '\n'); i >= 0 {
		if _, err := io.WriteString(rw.w, rw.r.Replace(string(rw.buf[:i+1]))); err != nil {
			return 0, err
		}
		rw.buf = append(rw.buf[:0], rw.buf[i+1:]...)
	}
	return len(p), nil
}

func (rw *renamingWriter) flush() {
	if len(rw.buf) > 0 {
		io.WriteString(rw.w, rw.r.Replace(string(rw.buf)))
		rw.buf = nil
	}
}

// renamedError shows an error with local copies' paths replaced by the URLs
// they were fetched from; errors.As still finds the original's type.
type renamedError struct {
	err error
	r   *strings.Replacer
}

func (e renamedError) Error() string { return e.r.Replace(e.err.Error()) }
func (e renamedError) Unwrap() error { return e.err }

// remoteDest is an s3:// output: a spool job to record into, sent when the
// run is over.
type remoteDest struct {
	job    *spool.Job
	client *objstore.Client
	dest   objstore.URL
}

// beginUpload prepares writing to an s3:// destination (a prefix): it
// checks the location and credentials, sends jobs earlier runs left behind,
// and starts a spool job whose directory the run records into.
func beginUpload(ctx context.Context, dest string, keep spool.Keep, command string, stderr io.Writer) (*remoteDest, error) {
	u, err := objstore.ParseURL(dest)
	if err != nil {
		return nil, usageError{err}
	}
	c, err := objstore.New(nil)
	if err != nil {
		return nil, usageError{err}
	}
	dir, err := spool.DefaultDir()
	if err != nil {
		return nil, err
	}
	sp, err := spool.Open(dir)
	if err != nil {
		return nil, err
	}
	// Fail before the run if the bucket cannot be listed with these
	// credentials, rather than after it.
	if err := c.CheckBucket(ctx, u.Bucket); err != nil {
		return nil, storageError{err}
	}
	sendPending(ctx, sp, c, stderr)
	job, err := sp.Begin(u.String(), keep, command)
	if err != nil {
		return nil, err
	}
	return &remoteDest{job: job, client: c, dest: u}, nil
}

// finish uploads the job's files. A failure keeps them in the spool and
// says where, as a storageError.
func (d *remoteDest) finish(ctx context.Context, stdout io.Writer) error {
	sent, err := spool.Send(ctx, d.client, d.job, nil)
	if err != nil {
		return storageError{fmt.Errorf("%w\nthe run's files are kept in %s (manifest %s); 'wireproof upload' sends them", err, d.job.Dir(), d.job.Manifest())}
	}
	fmt.Fprintf(stdout, "Uploaded %d file(s) to %s\n", len(sent), d.dest)
	return nil
}

// sendPending sends the spool's pending jobs, reporting on w; a job that
// fails stays pending. It returns the files sent and the jobs that failed.
func sendPending(ctx context.Context, sp *spool.Spool, c *objstore.Client, w io.Writer) (sent int, failed []error) {
	jobs, skipped := sp.Pending()
	for _, e := range skipped {
		fmt.Fprintln(w, "wireproof:", e)
	}
	for _, j := range jobs {
		files, err := spool.Send(ctx, c, j, nil)
		sent += len(files)
		if err != nil {
			failed = append(failed, fmt.Errorf("pending upload %s to %s: %w", j.Dir(), j.Dest, err))
			fmt.Fprintf(w, "wireproof: pending upload %s to %s failed, kept: %v\n", j.Dir(), j.Dest, err)
			continue
		}
		fmt.Fprintf(w, "Uploaded %d file(s) left by an earlier %s to %s\n", len(files), j.Command, j.Dest)
	}
	return sent, failed
}

// recordTarget resolves record's -o: a local file as given, or for an
// s3:// object a file in a new spool job, uploaded by finishRecord.
func recordTarget(ctx context.Context, output string, stderr io.Writer) (local string, remote *remoteDest, err error) {
	if !objstore.IsRemote(output) {
		return output, nil, nil
	}
	u, err := objstore.ParseURL(output)
	if err != nil {
		return "", nil, usageError{err}
	}
	if u.Key == "" || strings.HasSuffix(u.Key, "/") {
		return "", nil, usageError{fmt.Errorf("-o %s: name the bundle's object, as in s3://bucket/prefix/run.zst", output)}
	}
	dir := objstore.URL{Bucket: u.Bucket, Key: path.Dir(u.Key) + "/"}
	if dir.Key == "./" {
		dir.Key = ""
	}
	if remote, err = beginUpload(ctx, dir.String(), spool.KeepAll, "record", stderr); err != nil {
		return "", nil, err
	}
	if _, err := remote.client.Stat(ctx, u); err == nil {
		remote.job.Done()
		return "", nil, existsError(output, "object")
	} else if !objstore.IsNotFound(err) {
		remote.job.Done()
		return "", nil, storageError{err}
	}
	return filepath.Join(remote.job.Dir(), path.Base(u.Key)), remote, nil
}

// finishRecord uploads a recording made for an s3:// -o. The recording has
// ended (often on SIGINT), so the upload does not stop with ctx.
func finishRecord(ctx context.Context, remote *remoteDest, stderr io.Writer) error {
	if remote == nil {
		return nil
	}
	return remote.finish(context.WithoutCancel(ctx), stderr)
}

// notDirectories refuses a local directory given to a verb that reads one
// bundle file (inspect, report, export, diff, playback), saying which verbs
// take directories, instead of the reader's "read DIR: is a directory". It
// is a bundle that cannot be read: exit 3, as for a missing file.
func notDirectories(verb string, args []string) error {
	for _, arg := range args {
		if objstore.IsRemote(arg) {
			continue
		}
		if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
			return unreadableError{fmt.Errorf("%s is a directory, not a bundle: %s reads one bundle file (replay, index and view take directories)", arg, verb)}
		}
	}
	return nil
}

// storageHint says what to check when object storage could not be reached:
// with no endpoint configured wireproof talks to AWS S3 itself, which a user
// of an S3-compatible service (MinIO, versitygw, ...) did not mean. "" when
// err is no unreachable endpoint.
func storageHint(err error) string {
	var oe *objstore.Error
	if !errors.As(err, &oe) || oe.Reason != objstore.ReasonUnreachable {
		return ""
	}
	if strings.HasPrefix(oe.Endpoint, "AWS S3 (") {
		return "no endpoint is configured, so this went to AWS S3: for an S3-compatible service set AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (or the profile's endpoint_url) to its http(s)://host:port"
	}
	return "is the service at " + oe.Endpoint + " running? (the endpoint comes from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's endpoint_url)"
}
