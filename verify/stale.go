package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// runDirPrefix starts the name of every temporary run directory. The rest of
// the name says who owns it: "<pid>-<start>-<random>", start being the
// owner's start time in clock ticks since boot (/proc/PID/stat), 0 where it
// cannot be read. Naming the owner in the name, not in a file inside, makes
// it part of the directory's atomic creation: there is no moment at which a
// live run's directory has no owner.
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

// processAlive reports whether process pid, started at start (0: unknown),
// still runs. A pid that exists but was started at another time belongs to
// another process: the owner is dead and its pid reused.
func processAlive(pid int, start uint64) bool {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return true // cannot tell: keep
	}
	if start == 0 {
		return true
	}
	now := processStart(pid)
	return now == 0 || now == start
}

// processStart is pid's start time in clock ticks since boot (field 22 of
// /proc/PID/stat), or 0 where there is no such file.
func processStart(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces or
	// parentheses itself: count from the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	const startField = 22 - 3 // fields after the name begin with field 3
	if len(f) <= startField {
		return 0
	}
	v, err := strconv.ParseUint(f[startField], 10, 64)
	if err != nil {
		return 0
	}
	return v
}
