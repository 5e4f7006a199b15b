package verify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
)

// TestFirstClash: of the names an output holds, the first bundle the
// suite would write, in its order; names a run never writes are no clash.
func TestFirstClash(t *testing.T) {
	all := Scenarios
	idle := []assert.Scenario{"idle"}
	tests := []struct {
		name        string
		names       []string
		scenarios   []assert.Scenario
		first, last int
		want        string
	}{
		{"empty", nil, all, 1, 1 << 40, ""},
		{"one clash", []string{"idle-3.zst"}, idle, 1, 5, "idle-3.zst"},
		{"the earliest iteration", []string{"idle-9.zst", "idle-4.zst", "idle-7.zst"}, idle, 1, 10, "idle-4.zst"},
		{"within an iteration, the scenarios' order", []string{"nested-2.zst", "active-2.zst", "idle-3.zst"}, all, 1, 3, "active-2.zst"},
		{"far into a huge suite", []string{"nested-999999999.zst", "idle-1000000000.zst"}, all, 1, 1000000000, "nested-999999999.zst"},
		{"past the last iteration", []string{"idle-6.zst"}, idle, 1, 5, ""},
		{"before the first iteration", []string{"idle-6.zst"}, idle, 7, 7, ""},
		{"another scenario", []string{"active-1.zst"}, idle, 1, 5, ""},
		{"not a run's name", []string{"idle-01.zst", "idle-+1.zst", "idle-1", "idle-1.verdict.json", "idle-1.zst.tmp", "idle.zst", "-1.zst", "results.json", "idle-1.work"}, idle, 1, 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, FirstClash(tt.names, tt.scenarios, tt.first, tt.last)); diff != "" {
				t.Errorf("FirstClash(%q, %v, %d, %d) (-want +got):\n%s", tt.names, tt.scenarios, tt.first, tt.last, diff)
			}
		})
	}
}

// TestRunSuiteChecksOutputOnce: a suite of a billion iterations refuses a
// bundle its output holds far into it, having read the directory once and
// stated no file: the check costs what the directory holds.
func TestRunSuiteChecksOutputOnce(t *testing.T) {
	tests := []struct {
		name     string
		scenario assert.Scenario
		have     []string
		want     string
	}{
		{"one scenario", "idle", []string{"idle-500000.zst", "idle-2000000000.zst"}, "idle-500000.zst"},
		{"every scenario", ScenarioAll, []string{"idle-1000000000.zst", "nested-999999999.zst"}, "nested-999999999.zst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, n := range tt.have {
				if err := os.WriteFile(filepath.Join(dir, n), []byte("evidence"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			stats, reads := 0, 0
			stat, readDir := osStat, osReadDir
			t.Cleanup(func() { osStat, osReadDir = stat, readDir })
			osStat = func(p string) (os.FileInfo, error) { stats++; return os.Stat(p) }
			osReadDir = func(p string) ([]os.DirEntry, error) { reads++; return os.ReadDir(p) }
			_, err := RunSuite(context.Background(), Options{Scenario: tt.scenario, Repeat: 1000000000, OutDir: dir})
			var exists *ExistsError
			if !errors.As(err, &exists) || exists.Name != tt.want {
				t.Fatalf("err = %v; want the *ExistsError of %s", err, tt.want)
			}
			if stats != 0 || reads != 1 {
				t.Errorf("the check stated %d files and read the directory %d times; want none and once", stats, reads)
			}
		})
	}
}
