// Package wireprooftest records a test's traffic to a real server into a
// wireproof bundle, and plays a bundle back to the code under test, so that a
// test recorded once against a real server runs in CI without it.
//
//	var record = flag.Bool("record", false, "record testdata/client.zst against the real server")
//
//	func TestClient(t *testing.T) {
//		var base string
//		if *record { // go test -run TestClient -record, with the server running
//			base = wireprooftest.Record(t, "http://127.0.0.1:3773", &wireprooftest.RecordOptions{Path: "testdata/client.zst"})
//		} else {
//			base = wireprooftest.Playback(t, "testdata/client.zst", nil)
//		}
//		client := NewClient(base)
//		...
//	}
//
// Or, as go-vcr's ModeRecordOnce, RecordOnce records against the real
// server when the bundle does not exist yet and plays it back when it does:
//
//	base := wireprooftest.RecordOnce(t, "http://127.0.0.1:3773", "testdata/client.zst", nil)
//
// Code that does not take a base URL (it builds the real server's URLs
// itself) is given a client whose transport sends every request there:
//
//	client := &http.Client{Transport: wireprooftest.RoundTripper(base, nil)}
//
// Record keeps the bundle of a failed test and logs the wireproof inspect
// command that shows it; Playback fails the test when the code under test
// sent a request the recording does not hold or left a recorded one unsent.
// Matching (PlaybackOptions.Match) and redaction (RecordOptions.Redact,
// TokenFields, RedactRequest) have hooks; nil options mean the defaults.
//
// Importing the package builds only what recording and playback use: none
// of wireproof's judge, viewer, storage, SQLite or browser packages (a test
// lists the packages a scratch module importing it builds).
package wireprooftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/playback"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/redact"
)

// RecordOptions configure Record. A nil *RecordOptions means the defaults.
type RecordOptions struct {
	// Path is the bundle to write. Default: a file named after the test in
	// the test's temporary directory (kept elsewhere if the test fails). An
	// existing file at Path is replaced when the recording is complete:
	// recording again is how a test's bundle is refreshed.
	Path string
	// Redact are secrets (beyond the credentials recognised by name) to
	// replace by [REDACTED] before anything is written.
	Redact []string
	// TokenFields names the fields whose values are credentials
	// (record.Options.TokenFields; nil means redact.DefaultTokenFields).
	TokenFields []string
	// RedactRequest, if set, is called with every request the code under
	// test sends, before anything of it is recorded, and returns secrets
	// to redact from then on (in that request and everything after it, in
	// every spelling): the value of a credential header of a name only
	// your API uses, a key in a query. The request's body is not readable
	// here.
	RedactRequest func(r *http.Request) []string
}

// Record starts a recording proxy in front of upstreamURL for the rest of
// the test and returns the proxy's URL. Everything sent through it is
// written into a bundle that is complete when the test's cleanup runs. If
// the test fails, the bundle is kept and its path logged with the command
// that shows it.
func Record(tb testing.TB, upstreamURL string, opts *RecordOptions) string {
	tb.Helper()
	var o RecordOptions
	if opts != nil {
		o = *opts
	}
	up, err := url.Parse(upstreamURL)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		tb.Fatalf("wireprooftest.Record: upstream %q: want an http:// or https:// URL", upstreamURL)
	}
	final := o.Path
	inTemp := final == ""
	if inTemp {
		final = filepath.Join(tb.TempDir(), fileName(tb.Name())+".zst")
	}
	// Written beside its final place and renamed when complete, so that a
	// test interrupted half way leaves the previous recording in place.
	if dir := filepath.Dir(final); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatalf("wireprooftest.Record: %v", err)
		}
	}
	partial := final + ".partial"
	os.Remove(partial)
	w, err := bundle.Create(partial, bundle.Header{
		Tool:     "wireprooftest",
		Started:  time.Now(),
		Manifest: bundle.Manifest{Scenario: tb.Name(), Options: map[string]string{"upstream": redact.Text(upstreamURL, &redact.Options{Secrets: o.Redact, TokenFields: o.TokenFields})}},
	}, nil)
	if err != nil {
		tb.Fatalf("wireprooftest.Record: %v", err)
	}
	rec := record.New(w, &record.Options{Redact: o.Redact, TokenFields: o.TokenFields, File: partial})
	proxy, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: up})
	if err != nil {
		rec.Close()
		tb.Fatalf("wireprooftest.Record: %v", err)
	}
	var handler http.Handler = proxy
	if o.RedactRequest != nil {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body := r.Body
			r.Body = http.NoBody
			for _, secret := range o.RedactRequest(r) {
				if secret != "" {
					rec.AddSecret(secret)
				}
			}
			r.Body = body
			proxy.ServeHTTP(w, r)
		})
	}
	srv, err := record.ListenHandler(context.Background(), "", proxy, handler)
	if err != nil {
		rec.Close()
		tb.Fatalf("wireprooftest.Record: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			tb.Errorf("wireprooftest.Record: closing the proxy: %v", err)
		}
		if err := rec.Close(); err != nil {
			tb.Errorf("wireprooftest.Record: closing the bundle: %v", err)
		}
		if err := os.Rename(partial, final); err != nil {
			tb.Errorf("wireprooftest.Record: %v", err)
			return
		}
		if !tb.Failed() {
			return
		}
		kept := final
		if inTemp {
			// The test's temporary directory goes when the test ends.
			if kept, err = keep(final, tb.Name()); err != nil {
				tb.Errorf("wireprooftest.Record: keeping the bundle of the failed test: %v", err)
				return
			}
		}
		tb.Logf("wireproof: the traffic of this failed test is in %s\n\twireproof inspect %s", kept, kept)
	})
	return srv.URL
}

// keep copies the bundle at path out of the test's temporary directory.
func keep(path, name string) (string, error) {
	dir, err := os.MkdirTemp("", "wireproof-"+fileName(name)+"-")
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, filepath.Base(path))
	in, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

// fileName makes a test name usable as a file name.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}

// PlaybackOptions configure Playback. A nil *PlaybackOptions means the
// defaults.
type PlaybackOptions struct {
	// Timing is how recorded gaps are reproduced. Default: fast (tests do
	// not wait for what the server took its time over); set
	// &playback.Timing{} to keep the recorded gaps.
	Timing *playback.Timing
	// Lenient only logs misses and recorded requests never played instead
	// of failing the test.
	Lenient bool
	// Match, if set, decides which recorded HTTP exchange answers a
	// request, in place of the default comparison (method, path, query
	// and body, ids unified): see playback.Options.Match. Nil means the
	// default.
	Match func(recorded, live *http.Request) bool
}

// Playback serves the bundle at path for the rest of the test and returns
// its URL. At cleanup it fails the test if a request matched nothing
// recorded or a recorded request was never played (unless Lenient), with
// the closest recorded candidate of every miss.
func Playback(tb testing.TB, path string, opts *PlaybackOptions) string {
	tb.Helper()
	var o PlaybackOptions
	if opts != nil {
		o = *opts
	}
	rec, err := playback.Load(context.Background(), path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			tb.Fatalf("wireprooftest.Playback: %v (record it first: see wireprooftest.Record)", err)
		}
		tb.Fatalf("wireprooftest.Playback: %v", err)
	}
	if rec.Truncated != "" {
		tb.Logf("wireprooftest.Playback: %s is truncated: %s", path, rec.Truncated)
	}
	timing := playback.Timing{Fast: true}
	if o.Timing != nil {
		timing = *o.Timing
	}
	srv, err := playback.Serve(context.Background(), rec, &playback.ServeOptions{Options: playback.Options{Timing: timing, Match: o.Match}})
	if err != nil {
		tb.Fatalf("wireprooftest.Playback: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rep, err := srv.Close(ctx)
		if err != nil {
			tb.Errorf("wireprooftest.Playback: stopping: %v", err)
		}
		if rep.Clean() {
			return
		}
		msg := fmt.Sprintf("wireprooftest.Playback of %s: %s", path, rep.Summary())
		if o.Lenient {
			tb.Log(msg)
		} else {
			tb.Error(msg)
		}
	})
	return srv.URL
}
