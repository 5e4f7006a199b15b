package verify

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRemoveStaleRunDirs(t *testing.T) {
	// A process that has surely exited: started and reaped.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	start := processStart(me)
	if start == 0 {
		t.Skip("no /proc/PID/stat: process start times cannot be read here")
	}
	dir := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	alive := mk(fmt.Sprintf("wireproof-run-%d-%d-abc", me, start))
	aliveUnknownStart := mk(fmt.Sprintf("wireproof-run-%d-0-abc", me))
	reused := mk(fmt.Sprintf("wireproof-run-%d-%d-abc", me, start+1)) // our pid, another process's start
	deadDir := mk(fmt.Sprintf("wireproof-run-%d-%d-abc", dead.Process.Pid, 0))
	if err := os.WriteFile(filepath.Join(deadDir, "state.sqlite"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	legacy := mk("wireproof-run-123456789") // no owner in the name: never touched
	other := mk("wireproof-verify-1")
	target := mk("target")
	link := filepath.Join(dir, fmt.Sprintf("wireproof-run-%d-0-link", dead.Process.Pid))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}

	got := removeStaleRunDirs(dir)
	sort.Strings(got)
	want := []string{reused, deadDir}
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	for _, p := range []string{alive, aliveUnknownStart, legacy, other, target, link} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s must stay: %v", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(deadDir); !os.IsNotExist(err) {
		t.Errorf("the dead owner's directory is still there: %v", err)
	}
}

func TestRunDirPatternNamesThisProcess(t *testing.T) {
	d, err := os.MkdirTemp(t.TempDir(), runDirPattern())
	if err != nil {
		t.Fatal(err)
	}
	pid, start, ok := parseRunDirName(filepath.Base(d))
	if !ok || pid != os.Getpid() || start != processStart(os.Getpid()) {
		t.Fatalf("parseRunDirName(%q) = %d, %d, %v; want this process", filepath.Base(d), pid, start, ok)
	}
	if !processAlive(pid, start) {
		t.Fatal("this process is not alive by its own run directory's name")
	}
}
