package verify_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/wireproof/wireproof/internal/filelock"
	"github.com/wireproof/wireproof/verify"
)

// TestRunRefusesAnExistingBundle: Run and RunSuite refuse an output
// directory that holds a bundle they would write with an *OutputError
// naming the directory, whose cause is an *ExistsError naming the bundle
// (an fs.ErrExist), before anything runs.
func TestRunRefusesAnExistingBundle(t *testing.T) {
	tests := []struct {
		name string
		have string
		opts verify.Options
		run  func(context.Context, verify.Options) error
	}{
		{"Run", "idle-2.zst", verify.Options{Scenario: "idle", Iteration: 2},
			func(ctx context.Context, o verify.Options) error { _, err := verify.Run(ctx, o); return err }},
		{"RunSuite", "active-4.zst", verify.Options{Scenario: verify.ScenarioAll, Repeat: 4},
			func(ctx context.Context, o verify.Options) error { _, err := verify.RunSuite(ctx, o); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.have), []byte("evidence"), 0o600); err != nil {
				t.Fatal(err)
			}
			tt.opts.OutDir = dir
			err := tt.run(context.Background(), tt.opts)
			var out *verify.OutputError
			var exists *verify.ExistsError
			if !errors.As(err, &out) || out.Path != dir || !errors.As(err, &exists) || exists.Name != tt.have || !errors.Is(err, fs.ErrExist) {
				t.Fatalf("err = %v (%T); want an *OutputError about %s holding an *ExistsError about %s", err, err, dir, tt.have)
			}
		})
	}
}

// TestRunSuiteRefusesABusyDirectory: while another suite holds an output
// directory's lock, RunSuite refuses it at once (an *OutputError holding a
// *BusyError, exit 6) and writes nothing there.
func TestRunSuiteRefusesABusyDirectory(t *testing.T) {
	dir := t.TempDir()
	lock, err := os.OpenFile(filepath.Join(dir, ".wireproof-verify.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := filelock.TryLock(lock); err != nil {
		t.Fatal(err)
	}
	opts := verify.Options{Scenario: "idle", OutDir: dir}
	_, err = verify.RunSuite(context.Background(), opts)
	var out *verify.OutputError
	var busy *verify.BusyError
	if !errors.As(err, &out) || out.Path != dir || !errors.As(err, &busy) {
		t.Fatalf("err = %v (%T); want an *OutputError about %s holding a *BusyError", err, err, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused suite wrote results.json (%v)", err)
	}
	filelock.Unlock(lock)
	lock.Close()
}
