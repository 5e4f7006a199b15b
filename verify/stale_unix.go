//go:build unix

package verify

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

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
