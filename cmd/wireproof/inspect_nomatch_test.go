package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A filter that matches nothing says so, instead of an empty timeline that
// looks like an empty bundle.
func TestInspectSaysWhenNothingMatched(t *testing.T) {
	path := filepath.Join("..", "..", "fixtures", "golden", "live", "idle.zst")
	stdout, stderr, err := inspect(t, inspectOptions{From: time.Hour}, path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "0 events matched the filters (the events run from +0s to +0.") {
		t.Errorf("text output does not say nothing matched:\n%s", stdout)
	}
	stdout, stderr, err = inspect(t, inspectOptions{JSON: true, Kinds: []string{"no-such-kind"}}, path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(stdout, "\n") != 1 || !strings.Contains(stderr, "0 events matched the filters") {
		t.Errorf("--json: stdout %q (want the header line only), stderr %q", stdout, stderr)
	}
	// Something matched: no note.
	stdout, _, _ = inspect(t, inspectOptions{Kinds: []string{"mark"}}, path)
	if strings.Contains(stdout, "matched") {
		t.Errorf("a note although events matched:\n%s", stdout)
	}
}
