package objstore

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/tags"
)

// Options configure a Client. A nil *Options means all defaults.
type Options struct {
	// Config says where the service is; its empty fields are resolved from
	// the environment (see Config.Resolve).
	Config Config
	// PartSize is the size of one part of a multipart upload; a file larger
	// than it is uploaded in parts. Default DefaultPartSize; S3 wants at
	// least 5 MiB.
	PartSize uint64
	// Attempts is how many times an upload or a listing is tried before it
	// fails; default 4.
	Attempts int
	// Backoff is the wait before the first retry, doubled for each next
	// one; default 250 ms.
	Backoff time.Duration
	// Transport, if set, carries the HTTP requests.
	Transport http.RoundTripper
}

// Defaults of Options.
const (
	DefaultPartSize = 16 << 20
	DefaultAttempts = 4
	DefaultBackoff  = 250 * time.Millisecond
)

// Client talks to one S3-compatible service. It is safe for concurrent use.
type Client struct {
	mc       *minio.Client
	cfg      Config
	partSize uint64
	attempts int
	backoff  time.Duration
	noCreds  bool
}

// New makes a Client. It does not touch the network.
func New(opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	cfg, err := o.Config.Resolve()
	if err != nil {
		return nil, err
	}
	host, secure, err := cfg.endpoint()
	if err != nil {
		return nil, err
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{Profile: cfg.Profile},
	})
	mo := &minio.Options{
		Creds:      creds,
		Secure:     secure,
		Region:     cfg.Region,
		Transport:  o.Transport,
		MaxRetries: 1, // Put and List retry with their own backoff
	}
	if cfg.Endpoint != "" {
		mo.BucketLookup = minio.BucketLookupPath // what S3-compatible services expect
	}
	mc, err := minio.New(host, mo)
	if err != nil {
		return nil, &ConfigError{Msg: err.Error()}
	}
	c := &Client{mc: mc, cfg: cfg, partSize: o.PartSize, attempts: o.Attempts, backoff: o.Backoff}
	if c.partSize == 0 {
		c.partSize = DefaultPartSize
	}
	if c.attempts < 1 {
		c.attempts = DefaultAttempts
	}
	if c.backoff <= 0 {
		c.backoff = DefaultBackoff
	}
	if v, err := creds.GetWithContext(nil); err != nil || v.AccessKeyID == "" {
		c.noCreds = true
	}
	return c, nil
}

// Endpoint is the service the client talks to, for messages.
func (c *Client) Endpoint() string {
	if c.cfg.Endpoint == "" {
		return "AWS S3 (" + c.cfg.Region + ")"
	}
	return c.cfg.Endpoint
}

// Object is one stored object.
type Object struct {
	Key  string
	Size int64
	// Meta is the object's user metadata (lower-case names without the
	// x-amz-meta- prefix); set by Stat, not by List.
	Meta map[string]string
}

// List returns the objects whose keys start with prefix, sorted by key.
func (c *Client) List(ctx context.Context, bucket, prefix string) ([]Object, error) {
	var out []Object
	err := c.retry(ctx, func() error {
		out = out[:0]
		for o := range c.mc.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if o.Err != nil {
				return o.Err
			}
			out = append(out, Object{Key: o.Key, Size: o.Size})
		}
		return nil
	})
	if err != nil {
		return nil, c.wrap("list", URL{bucket, prefix}, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Stat returns the object's size and metadata.
func (c *Client) Stat(ctx context.Context, u URL) (Object, error) {
	info, err := c.mc.StatObject(ctx, u.Bucket, u.Key, minio.StatObjectOptions{})
	if err != nil {
		return Object{}, c.wrap("stat", u, err)
	}
	meta := map[string]string{}
	for k, v := range info.UserMetadata {
		meta[strings.ToLower(k)] = v
	}
	return Object{Key: info.Key, Size: info.Size, Meta: meta}, nil
}

// Tags returns the object's tags.
func (c *Client) Tags(ctx context.Context, u URL) (map[string]string, error) {
	t, err := c.mc.GetObjectTagging(ctx, u.Bucket, u.Key, minio.GetObjectTaggingOptions{})
	if err != nil {
		return nil, c.wrap("get tags of", u, err)
	}
	return t.ToMap(), nil
}

// Open streams the object. Nothing is read until the first Read; errors of
// the request come from Read, in the form of *Error.
func (c *Client) Open(ctx context.Context, u URL) (io.ReadCloser, error) {
	obj, err := c.mc.GetObject(ctx, u.Bucket, u.Key, minio.GetObjectOptions{})
	if err != nil {
		return nil, c.wrap("read", u, err)
	}
	return &objectReader{obj: obj, c: c, u: u}, nil
}

type objectReader struct {
	obj *minio.Object
	c   *Client
	u   URL
}

func (r *objectReader) Read(p []byte) (int, error) {
	n, err := r.obj.Read(p)
	if err != nil && err != io.EOF {
		err = r.c.wrap("read", r.u, err)
	}
	return n, err
}

func (r *objectReader) Close() error { return r.obj.Close() }

// Download copies the object to the local file dst (created or truncated).
func (c *Client) Download(ctx context.Context, u URL, dst string) error {
	rc, err := c.Open(ctx, u)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// MakeBucket creates a bucket; one that exists already and is ours is fine.
func (c *Client) MakeBucket(ctx context.Context, bucket string) error {
	err := c.mc.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: c.cfg.Region})
	if err != nil {
		var er minio.ErrorResponse
		if errors.As(err, &er) && er.Code == "BucketAlreadyOwnedByYou" {
			return nil
		}
		return c.wrap("create bucket", URL{Bucket: bucket}, err)
	}
	return nil
}

// Upload is what to store with an uploaded file.
type Upload struct {
	// Meta becomes the object's user metadata (x-amz-meta-NAME). Values
	// are made printable ASCII.
	Meta map[string]string
	// Tags become the object's tags. Values are cut to S3's tag charset.
	Tags map[string]string
	// ContentType of the object; default application/octet-stream.
	ContentType string
	// NoOverwrite refuses to replace an object that holds other bytes
	// (evidence is never overwritten); an object that already holds the
	// file's bytes, as a resumed upload finds, counts as stored.
	NoOverwrite bool
}

// Put uploads the local file to u, in parts when it is larger than the part
// size, checks the stored object against the file's digest, and retries
// with backoff on failures that may pass (not on refused credentials or a
// missing bucket). The object's metadata carries the file's SHA-256 as
// "sha256".
func (c *Client) Put(ctx context.Context, u URL, file string, up *Upload) error {
	if up == nil {
		up = &Upload{}
	}
	sum, md5sum, size, err := digestFile(file)
	if err != nil {
		return err
	}
	meta := map[string]string{}
	for k, v := range up.Meta {
		meta[k] = asciiValue(v)
	}
	meta["sha256"] = sum
	tagMap := map[string]string{}
	for k, v := range up.Tags {
		if tv := tagValue(v); tv != "" {
			tagMap[k] = tv
		}
	}
	if _, err := tags.NewTags(tagMap, true); err != nil {
		return fmt.Errorf("object tags for %s: %w", u, err)
	}
	opts := minio.PutObjectOptions{
		UserMetadata:   meta,
		UserTags:       tagMap,
		ContentType:    up.ContentType,
		PartSize:       c.partSize,
		SendContentMd5: true,
	}
	if opts.ContentType == "" {
		opts.ContentType = "application/octet-stream"
	}
	if up.NoOverwrite {
		o, err := c.Stat(ctx, u)
		switch {
		case err == nil && o.Meta["sha256"] == sum && o.Size == size:
			return nil
		case err == nil:
			return &Error{Op: "upload to", URL: u.String(), Endpoint: c.Endpoint(), Reason: ReasonExists,
				Msg: "another object is stored under this key, and evidence is never overwritten: choose another prefix"}
		case !IsNotFound(err):
			return err
		}
	}
	err = c.retry(ctx, func() error {
		info, err := c.mc.FPutObject(ctx, u.Bucket, u.Key, file, opts)
		if err != nil {
			return err
		}
		return c.checkStored(ctx, u, info, sum, md5sum, size)
	})
	if err != nil {
		return c.wrap("upload to", u, err)
	}
	return nil
}

// checkStored compares the stored object with the file: the size, and the
// ETag of a single-part upload (its MD5), or else the SHA-256 of the object
// read back.
func (c *Client) checkStored(ctx context.Context, u URL, info minio.UploadInfo, sum, md5sum string, size int64) error {
	if info.Size != size {
		return &DigestError{URL: u.String(), Msg: fmt.Sprintf("stored %d bytes, the file has %d", info.Size, size)}
	}
	etag := strings.Trim(info.ETag, `"`)
	if uint64(size) <= c.partSize && len(etag) == 32 && !strings.Contains(etag, "-") {
		if etag != md5sum {
			return &DigestError{URL: u.String(), Msg: "the stored object's MD5 (ETag) differs from the file's"}
		}
		return nil
	}
	rc, err := c.Open(ctx, u)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		return err
	}
	if hex.EncodeToString(h.Sum(nil)) != sum {
		return &DigestError{URL: u.String(), Msg: "the stored object's SHA-256 differs from the file's"}
	}
	return nil
}

func digestFile(path string) (sha, md string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", 0, err
	}
	defer f.Close()
	hs, hm := sha256.New(), md5.New()
	size, err = io.Copy(io.MultiWriter(hs, hm), f)
	if err != nil {
		return "", "", 0, err
	}
	return hex.EncodeToString(hs.Sum(nil)), hex.EncodeToString(hm.Sum(nil)), size, nil
}

// retry runs fn until it succeeds, fails for good, or runs out of attempts,
// waiting Backoff, 2×Backoff, ... between tries.
func (c *Client) retry(ctx context.Context, fn func() error) error {
	wait := c.backoff
	var err error
	for i := 0; i < c.attempts; i++ {
		if i > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return err
			case <-t.C:
			}
			wait *= 2
		}
		if err = fn(); err == nil || permanent(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// asciiValue makes a metadata value printable ASCII (HTTP header safe).
func asciiValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '_'
		}
	}
	return string(b)
}

// tagValue keeps the characters S3 allows in a tag value, at most 256.
func tagValue(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" +-=._:/@", r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 256 {
			break
		}
	}
	return b.String()
}

// CheckBucket makes sure the bucket exists and the credentials may use it.
func (c *Client) CheckBucket(ctx context.Context, bucket string) error {
	var ok bool
	err := c.retry(ctx, func() (err error) {
		ok, err = c.mc.BucketExists(ctx, bucket)
		return err
	})
	if err != nil {
		return c.wrap("reach bucket", URL{Bucket: bucket}, err)
	}
	if !ok {
		return &Error{Op: "reach bucket", URL: URL{Bucket: bucket}.String(), Endpoint: c.Endpoint(), Reason: ReasonNotFound, Code: "NoSuchBucket", Msg: "the bucket does not exist"}
	}
	return nil
}
