package wireprooftest

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

// Options configure RecordOnce. A nil *Options means the defaults.
type Options struct {
	// Record configures the recording when there is none yet (its Path is
	// RecordOnce's path).
	Record *RecordOptions
	// Playback configures the playback when there is one.
	Playback *PlaybackOptions
}

// RecordOnce is go-vcr's ModeRecordOnce: when no bundle exists at path it
// records the test against the real server at upstreamURL into path (as
// Record does); when one does, it plays it back (as Playback does) and
// upstreamURL is not contacted. It returns the URL the code under test
// talks to either way. Delete the bundle to record it again.
func RecordOnce(tb testing.TB, upstreamURL, path string, opts *Options) string {
	tb.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return Playback(tb, path, o.Playback)
	case !errors.Is(err, fs.ErrNotExist):
		tb.Fatalf("wireprooftest.RecordOnce: %v", err)
	}
	var ro RecordOptions
	if o.Record != nil {
		ro = *o.Record
	}
	ro.Path = path
	tb.Logf("wireprooftest.RecordOnce: %s does not exist: recording it against %s", path, upstreamURL)
	return Record(tb, upstreamURL, &ro)
}
