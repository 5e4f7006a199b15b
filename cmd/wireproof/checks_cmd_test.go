package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
)

// TestChecksVerb: `wireproof checks` prints the catalogue, row for row, as
// text and as NDJSON; --suite keeps one suite; an unknown suite is exit 2.
func TestChecksVerb(t *testing.T) {
	catalogue := assert.Catalogue()

	code, out, errOut := runCLI(t, "checks")
	if code != 0 {
		t.Fatalf("checks: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(catalogue)+1 || strings.Fields(lines[0])[0] != "SUITE" {
		t.Fatalf("checks printed %d lines, want a header and %d rows:\n%s", len(lines), len(catalogue), out)
	}
	for i, c := range catalogue {
		f := strings.Fields(lines[i+1])
		got := []string{f[0], f[1], f[2], strings.Join(f[3:], " ")}
		want := []string{c.Suite, string(c.Stage), c.ID, c.Message}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("row %d (-catalogue +printed):\n%s", i, diff)
		}
	}

	code, out, errOut = runCLI(t, "checks", "--json", "--suite", assert.SuiteConformance)
	if code != 0 {
		t.Fatalf("checks --json: exit %d: %s", code, errOut)
	}
	var got []assert.CheckInfo
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var c assert.CheckInfo
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("checks --json: %v\n%s", err, out)
		}
		got = append(got, c)
	}
	if diff := cmp.Diff(assert.Conformance.Infos(assert.SuiteConformance), got); diff != "" {
		t.Errorf("checks --json --suite %s (-want +got):\n%s", assert.SuiteConformance, diff)
	}

	code, _, errOut = runCLI(t, "checks", "--suite", "no-such-suite")
	if code != exitUsage || !strings.Contains(errOut, `unknown suite "no-such-suite"`) || !strings.Contains(errOut, assert.SuiteBackgroundDelivery) {
		t.Errorf("checks --suite no-such-suite: exit %d, stderr %q; want exit %d naming the suite and the known ones", code, errOut, exitUsage)
	}
}
