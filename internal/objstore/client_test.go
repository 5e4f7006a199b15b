package objstore_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/objstore"
	"github.com/wireproof/wireproof/internal/objstore/s3test"
)

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func readAll(t *testing.T, c *objstore.Client, u objstore.URL) []byte {
	t.Helper()
	rc, err := c.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPutRoundTrip: a file uploaded (in one part, and in several) reads back
// byte for byte, with its metadata, tags and digest.
func TestPutRoundTrip(t *testing.T) {
	_, prefix := s3test.Prefix(t)
	c, err := objstore.New(&objstore.Options{PartSize: 5 << 20})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		size int
	}{
		{"small.zst", 1000},
		{"multipart.zst", 12<<20 + 17}, // three parts of 5 MiB
		{"empty.zst", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := randomBytes(tt.size)
			file := writeFile(t, dir, tt.name, data)
			u := prefix.Join(tt.name)
			up := &objstore.Upload{
				Meta: map[string]string{"scenario": "nested", "check": "single-notification"},
				Tags: map[string]string{"scenario": "nested", "status": "failed"},
			}
			if err := c.Put(t.Context(), u, file, up); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, c, u); !bytes.Equal(got, data) {
				t.Fatalf("read back %d bytes, want the %d uploaded", len(got), len(data))
			}
			o, err := c.Stat(t.Context(), u)
			if err != nil {
				t.Fatal(err)
			}
			if o.Size != int64(tt.size) || o.Meta["scenario"] != "nested" || o.Meta["check"] != "single-notification" || len(o.Meta["sha256"]) != 64 {
				t.Errorf("stat = %+v", o)
			}
			tags, err := c.Tags(t.Context(), u)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]string{"scenario": "nested", "status": "failed"}, tags); diff != "" {
				t.Errorf("tags (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPutNoOverwrite: other bytes are never stored over an object; the same
// bytes again (a resumed upload) are fine.
func TestPutNoOverwrite(t *testing.T) {
	c, prefix := s3test.Prefix(t)
	dir := t.TempDir()
	a := writeFile(t, dir, "a", []byte("first"))
	b := writeFile(t, dir, "b", []byte("second"))
	u := prefix.Join("run.zst")
	up := &objstore.Upload{NoOverwrite: true}
	if err := c.Put(t.Context(), u, a, up); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(t.Context(), u, a, up); err != nil {
		t.Fatalf("the same bytes again: %v", err)
	}
	err := c.Put(t.Context(), u, b, up)
	var oe *objstore.Error
	if !errors.As(err, &oe) || oe.Reason != objstore.ReasonExists {
		t.Fatalf("other bytes: err = %v, want %s", err, objstore.ReasonExists)
	}
	if got := readAll(t, c, u); string(got) != "first" {
		t.Errorf("object = %q, want the first upload", got)
	}
}

// failingTransport fails the first n PUT requests as a broken connection would.
type failingTransport struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (f *failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && f.n.Add(-1) >= 0 {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errors.New("connection reset by test")
	}
	return f.next.RoundTrip(r)
}

// TestPutRetries: an upload that fails twice is retried with backoff and
// stored; one that keeps failing gives up with the endpoint in the error.
func TestPutRetries(t *testing.T) {
	_, prefix := s3test.Prefix(t)
	ft := &failingTransport{next: http.DefaultTransport}
	ft.n.Store(2)
	c, err := objstore.New(&objstore.Options{Transport: ft, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, t.TempDir(), "run.zst", []byte("evidence"))
	if err := c.Put(t.Context(), prefix.Join("run.zst"), file, nil); err != nil {
		t.Fatalf("after two failures: %v", err)
	}
	ft.n.Store(100)
	err = c.Put(t.Context(), prefix.Join("other.zst"), file, nil)
	var oe *objstore.Error
	if !errors.As(err, &oe) || !strings.Contains(err.Error(), os.Getenv("AWS_ENDPOINT_URL")) {
		t.Fatalf("err = %v, want an *objstore.Error naming the endpoint", err)
	}
	if left := ft.n.Load(); left != 100-objstore.DefaultAttempts {
		t.Errorf("%d attempts made, want %d", 100-left, objstore.DefaultAttempts)
	}
}

// TestWrongCredentials: a wrong secret is refused at once (no retries), said
// plainly, and the secret is nowhere in the message.
func TestWrongCredentials(t *testing.T) {
	_, prefix := s3test.Prefix(t)
	const wrong = "not-the-secret-0123456789abcdef"
	t.Setenv("AWS_SECRET_ACCESS_KEY", wrong)
	c, err := objstore.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, t.TempDir(), "run.zst", []byte("x"))
	for name, err := range map[string]error{
		"put":    c.Put(t.Context(), prefix.Join("run.zst"), file, nil),
		"list":   func() error { _, err := c.List(t.Context(), prefix.Bucket, prefix.Key); return err }(),
		"bucket": c.CheckBucket(t.Context(), prefix.Bucket),
	} {
		if !objstore.IsAuth(err) {
			t.Errorf("%s: err = %v, want refused credentials", name, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, wrong) || !strings.Contains(msg, "AWS_SECRET_ACCESS_KEY") {
			t.Errorf("%s: message %q leaks the secret or does not say what to check", name, msg)
		}
	}
}

// TestRemoteBundles: a prefix lists like a directory (sorted, *.zst only,
// kept workspaces skipped, paths relative to the prefix), and a URL naming
// one object is that bundle.
func TestRemoteBundles(t *testing.T) {
	c, prefix := s3test.Prefix(t)
	dir := t.TempDir()
	for _, rel := range []string{"b/2.zst", "a.zst", "b/1.zst", "results.json", "b/1.verdict.json", "a-1.work/home/x.zst", "b/c.work/y.zst"} {
		if err := c.Put(t.Context(), prefix.Join(rel), writeFile(t, dir, rel, []byte(rel)), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		at   string
		want []string
	}{
		{prefix.String(), []string{"a.zst", "b/1.zst", "b/2.zst"}},
		{strings.TrimSuffix(prefix.String(), "/"), []string{"a.zst", "b/1.zst", "b/2.zst"}},
		{prefix.Join("b").String(), []string{"1.zst", "2.zst"}},
		{prefix.Join("b/1.zst").String(), []string{"1.zst"}},
	} {
		l := objstore.NewRemote(c, mustParse(t, tt.at))
		entries, err := l.Bundles(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", tt.at, err)
		}
		var rels []string
		for _, e := range entries {
			rels = append(rels, e.Rel)
			rc, err := l.Open(t.Context(), e)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if !strings.HasSuffix(e.Name, string(b)) {
				t.Errorf("%s holds %q", e.Name, b)
			}
		}
		if diff := cmp.Diff(tt.want, rels); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.at, diff)
		}
	}
	if _, err := objstore.NewRemote(c, prefix.Join("missing.zst")).Bundles(t.Context()); !objstore.IsNotFound(err) {
		t.Errorf("a missing bundle: err = %v, want not found", err)
	}
	l := objstore.NewRemote(c, prefix.Join("nothing-here/"))
	var none *objstore.NoBundlesError
	if _, err := l.Bundles(t.Context()); !errors.As(err, &none) {
		t.Errorf("empty prefix: err = %v, want *NoBundlesError", err)
	}
}

func mustParse(t *testing.T, s string) objstore.URL {
	t.Helper()
	u, err := objstore.ParseURL(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSharedCredentialsFile: with no key in the environment, the profile's
// keys in the shared credentials file are used, and a profile without the
// right ones is refused.
func TestSharedCredentialsFile(t *testing.T) {
	_, prefix := s3test.Prefix(t)
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	file := writeFile(t, t.TempDir(), "credentials", []byte(
		"[default]\naws_access_key_id = "+id+"\naws_secret_access_key = wrong-"+secret+"\n\n"+
			"[ci]\naws_access_key_id = "+id+"\naws_secret_access_key = "+secret+"\n"))
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	for profile, ok := range map[string]bool{"ci": true, "default": false} {
		t.Setenv("AWS_PROFILE", profile)
		c, err := objstore.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		err = c.CheckBucket(t.Context(), prefix.Bucket)
		if ok && err != nil {
			t.Errorf("profile %s: %v", profile, err)
		}
		if !ok && !objstore.IsAuth(err) {
			t.Errorf("profile %s: err = %v, want refused credentials", profile, err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("profile %s: the error shows the secret", profile)
		}
	}
}
