package bundleindex

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const golden = "../../fixtures/golden"

func summarize(t *testing.T, path string) Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	e, err := Summarize(context.Background(), path, f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestSummarize: an entry carries the manifest, the recorded verdict's
// status and failing check, counts and sizes.
func TestSummarize(t *testing.T) {
	type row struct {
		Scenario, Status, Check string
		Truncated, HasDigest    bool
	}
	for _, tt := range []struct {
		file string
		want row
	}{
		{"live/idle-duplicate-notification.zst", row{"idle", "failed", "single-notification", false, true}},
		{"live/active.zst", row{"active", "passed", "", false, true}},
		{"idle-interrupted.zst", row{"idle", "failed", "interrupted", false, true}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			e := summarize(t, filepath.Join(golden, tt.file))
			got := row{e.Scenario, string(e.Status), e.Check, e.Truncated, strings.HasPrefix(e.Digest, "sha256:")}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			fi, _ := os.Stat(filepath.Join(golden, tt.file))
			if e.Events < 10 || e.Bytes <= e.Size || e.Size != fi.Size() || e.DurationMs <= 0 || e.Started == nil {
				t.Errorf("counts and sizes: %+v", e)
			}
			if e.Status == "failed" && e.Seq == 0 {
				t.Errorf("a failed run's entry has no seq: %+v", e)
			}
		})
	}
}

// TestSummarizeBroken: a cut bundle is incomplete, not an error; a file that
// is no bundle is an unreadable entry saying why.
func TestSummarizeBroken(t *testing.T) {
	e := summarize(t, "../../bundle/testdata/unclosed.zst")
	if !e.Truncated || e.Status != StatusIncomplete {
		t.Errorf("unclosed bundle: %+v", e)
	}
	p := filepath.Join(t.TempDir(), "bad.zst")
	os.WriteFile(p, []byte("not a bundle"), 0o600)
	e = summarize(t, p)
	if e.Status != StatusUnreadable || !strings.Contains(e.Error, "not a wireproof bundle") {
		t.Errorf("not a bundle: %+v", e)
	}
}

func TestStats(t *testing.T) {
	entries := []Entry{
		{Scenario: "idle", Status: "passed"},
		{Scenario: "idle", Status: "failed", Check: "single-notification"},
		{Scenario: "idle", Status: "failed", Check: "single-notification"},
		{Scenario: "idle", Status: "failed", Check: "deadline"},
		{Scenario: "idle", Status: StatusIncomplete},
		{Scenario: "nested", Status: "passed"},
		{Scenario: "nested", Status: "passed"},
		{Scenario: "nested", Status: StatusUnreadable},
		// Fault-injected runs: expected failures, not flakes, not runs.
		{Scenario: "nested", Status: "failed", Check: "single-notification", Fault: "duplicate-notification"},
		{Scenario: "nested", Status: "passed", Fault: "slow-ack"},
	}
	scen, chk := Stats(entries)
	wantScen := []ScenarioStats{
		{Scenario: "idle", Runs: 4, Passed: 1, Failed: 3, FailRate: 0.75, Flaky: true, Incomplete: 1},
		{Scenario: "nested", Runs: 2, Passed: 2, Unreadable: 1, Faulted: 2},
	}
	wantChk := []CheckStats{
		{Scenario: "idle", Check: "single-notification", Failures: 2, Runs: 4, Rate: 0.5},
		{Scenario: "idle", Check: "deadline", Failures: 1, Runs: 4, Rate: 0.25},
	}
	if diff := cmp.Diff(wantScen, scen); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantChk, chk); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := WriteStats(&b, scen, chk); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"idle      4     1       3       75.0   yes    1           0           0", "nested    2     2       0       0.0    no     0           1           2", "idle      single-notification  2         4     50.0"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestEntrySchema: every line of the index carries every field of Entry,
// whatever the bundle (a clean pass, a cut one, one that is no bundle), so a
// query naming a field binds on any corpus; a live run's fault is its entry's.
func TestEntrySchema(t *testing.T) {
	var want []string
	et := reflect.TypeOf(Entry{})
	for i := range et.NumField() {
		name, _, _ := strings.Cut(et.Field(i).Tag.Get("json"), ",")
		want = append(want, name)
	}
	sort.Strings(want)
	bad := filepath.Join(t.TempDir(), "bad.zst")
	os.WriteFile(bad, []byte("not a bundle"), 0o600)
	for _, p := range []string{filepath.Join(golden, "live/active.zst"), "../../bundle/testdata/unclosed.zst", bad, filepath.Join(golden, "live/idle-duplicate-notification.zst")} {
		e := summarize(t, p)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(maps.Keys(m))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", p, diff)
		}
		if strings.Contains(p, "duplicate-notification") && e.Fault != "duplicate-notification" {
			t.Errorf("%s: fault %q, want the manifest's duplicate-notification", p, e.Fault)
		}
		if strings.Contains(p, "active") && (e.Fault != "" || string(m["truncated"]) != "false" || string(m["dirty"]) != "false") {
			t.Errorf("%s: a clean run's entry: fault %q truncated %s dirty %s", p, e.Fault, m["truncated"], m["dirty"])
		}
	}
}
