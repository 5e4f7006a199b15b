package spool

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const golden = "../../fixtures/golden"

// TestPendingSkipsLiveJobs: a job whose run is still writing (its lock held)
// is not pending; once released it is, and Done removes it.
func TestPendingSkipsLiveJobs(t *testing.T) {
	sp, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live, err := sp.Begin("s3://evidence/a/", KeepAll, "verify")
	if err != nil {
		t.Fatal(err)
	}
	left, err := sp.Begin("s3://evidence/b/", KeepFailed, "record")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(left.Dir(), "run.zst"), []byte("x"), 0o600)
	left.Release() // what a crash does

	jobs, skipped := sp.Pending()
	if len(skipped) != 0 || len(jobs) != 1 {
		t.Fatalf("pending = %d jobs, %v", len(jobs), skipped)
	}
	j := jobs[0]
	if diff := cmp.Diff([]string{"s3://evidence/b/", "record", "failed", left.Dir()}, []string{j.Dest, j.Command, string(j.Keep), j.Dir()}); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
	// A second sender does not get a job the first one holds.
	if again, _ := sp.Pending(); len(again) != 0 {
		t.Errorf("a held job is pending twice")
	}
	if err := j.Done(); err != nil {
		t.Fatal(err)
	}
	live.Release()
	jobs, _ = sp.Pending()
	if len(jobs) != 1 || jobs[0].Dest != "s3://evidence/a/" {
		t.Fatalf("after Done and Release: %d jobs", len(jobs))
	}
	jobs[0].Done()
	if entries, _ := os.ReadDir(sp.Dir); len(entries) != 0 {
		t.Errorf("spool not empty: %v", entries)
	}
}

// TestPrune: --keep failed removes passing runs (bundle, verdict,
// workspace) and keeps failed, cut and unreadable ones.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	copyFile := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, dst), b, 0o600)
	}
	copyFile(golden+"/live/active.zst", "active-1.zst")
	copyFile(golden+"/live/active.verdict.json", "active-1.verdict.json")
	os.MkdirAll(filepath.Join(dir, "active-1.work", "home"), 0o755)
	copyFile(golden+"/live/idle-duplicate-notification.zst", "idle-1.zst")
	copyFile("../../bundle/testdata/unclosed.zst", "idle-2.zst")
	os.WriteFile(filepath.Join(dir, "idle-3.zst"), []byte("not a bundle"), 0o600)
	os.WriteFile(filepath.Join(dir, "results.json"), []byte("[]"), 0o600)

	if removed, err := Prune(context.Background(), dir, KeepAll); err != nil || len(removed) != 0 {
		t.Fatalf("keep all removed %v, %v", removed, err)
	}
	removed, err := Prune(context.Background(), dir, KeepFailed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{filepath.Join(dir, "active-1.zst")}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	sort.Strings(left)
	if diff := cmp.Diff([]string{"idle-1.zst", "idle-2.zst", "idle-3.zst", "results.json"}, left); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
}

func TestParseKeep(t *testing.T) {
	for in, ok := range map[string]bool{"all": true, "failed": true, "": false, "passed": false} {
		if _, err := ParseKeep(in); (err == nil) != ok {
			t.Errorf("ParseKeep(%q) error = %v", in, err)
		}
	}
}
