package wireprooftest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/cassette"
)

// CassetteOptions configure ModelCassette and ModelRecordOnce. A nil
// *CassetteOptions means the defaults.
type CassetteOptions struct {
	// Paced plays each answer at its recorded pace; by default at once.
	Paced bool
	// Lenient only logs requests that matched no recorded model call
	// instead of failing the test.
	Lenient bool
	// Record configures the recording ModelRecordOnce makes when there is
	// none yet (its Path is ModelRecordOnce's path).
	Record *RecordOptions
}

// ModelCassette serves the model calls (Anthropic's Messages API: POST
// /v1/messages, count_tokens) recorded in the bundles at paths (a
// directory: its *.zst) for the rest of the test, as package model/cassette
// does, and returns its base URL: ANTHROPIC_BASE_URL for the code under
// test, or RoundTripper(url, nil) for code that names the API's host
// itself. A request is answered with the recorded answer of the recorded
// request it matches, run-bound values (ids, loopback ports, temporary
// directories, times) bound to the live ones; one that matches none gets
// an API error, and at cleanup the test fails (unless Lenient) with every
// miss: the nearest recorded request and the first field that differs.
func ModelCassette(tb testing.TB, opts *CassetteOptions, paths ...string) string {
	tb.Helper()
	var o CassetteOptions
	if opts != nil {
		o = *opts
	}
	c, err := cassette.Load(context.Background(), paths...)
	if err != nil {
		tb.Fatalf("wireprooftest.ModelCassette: %v", err)
	}
	h := cassette.NewHandler(c, &cassette.Options{Fast: !o.Paced})
	srv, err := model.Serve(context.Background(), "127.0.0.1:0", h)
	if err != nil {
		tb.Fatalf("wireprooftest.ModelCassette: %v", err)
	}
	tb.Cleanup(func() {
		if err := srv.Close(); err != nil {
			tb.Errorf("wireprooftest.ModelCassette: stopping: %v", err)
		}
		rep := h.Report()
		if rep.Missed == 0 {
			return
		}
		msg := fmt.Sprintf("wireprooftest.ModelCassette of %v: %s", paths, rep.Summary())
		if o.Lenient {
			tb.Log(msg)
		} else {
			tb.Error(msg)
		}
	})
	return srv.URL()
}

// ModelRecordOnce is RecordOnce for a model API: when no bundle exists at
// path it records the test's model calls against the real API at
// upstreamURL into path (as Record does; the key the code under test sends
// in x-api-key or Authorization is redacted); when one does, it serves it
// as ModelCassette does and upstreamURL is not contacted. It returns the
// URL the code under test talks to either way. Delete the bundle to record
// it again.
func ModelRecordOnce(tb testing.TB, upstreamURL, path string, opts *CassetteOptions) string {
	tb.Helper()
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return ModelCassette(tb, opts, path)
	case !errors.Is(err, fs.ErrNotExist):
		tb.Fatalf("wireprooftest.ModelRecordOnce: %v", err)
	}
	var ro RecordOptions
	if opts != nil && opts.Record != nil {
		ro = *opts.Record
	}
	ro.Path = path
	tb.Logf("wireprooftest.ModelRecordOnce: %s does not exist: recording it against %s", path, upstreamURL)
	return Record(tb, upstreamURL, &ro)
}
