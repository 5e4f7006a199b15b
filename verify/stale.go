package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// runDirPrefix starts the name of every temporary run directory. The rest of
// the name says who owns it: "<pid>-<start>-<random>", start being the
// owner's start time (processStart: clock ticks since boot on Linux, the
// creation time on Windows), 0 where it cannot be read. Naming the owner in
// the name, not in a file inside, makes it part of the directory's atomic
// creation: there is no moment at which a live run's directory has no owner.
const runDirPrefix = "wireproof-run-"

// runDirPattern is the os.MkdirTemp pattern of this process's run directories.
func runDirPattern() string {
	return fmt.Sprintf("%s%d-%d-", runDirPrefix, os.Getpid(), processStart(os.Getpid()))
}

// removeStaleRunDirs removes the run directories under dir whose owner is
// dead: a wireproof killed with SIGKILL cannot remove its own. A directory
// whose owner is alive, or whose owner cannot be told, is never touched.
// Errors are ignored: a directory that cannot be removed is left as it was.
func removeStaleRunDirs(dir string) (removed []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), runDirPrefix) {
			continue // a symlink is not a run directory, whatever its name
		}
		pid, start, ok := parseRunDirName(e.Name())
		if !ok || processAlive(pid, start) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// parseRunDirName reads the owner out of a run directory's name.
func parseRunDirName(name string) (pid int, start uint64, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(name, runDirPrefix), "-", 3)
	if len(parts) != 3 {
		return 0, 0, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return 0, 0, false
	}
	start, err = strconv.ParseUint(parts[1], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return pid, start, true
}
