package testkit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ownerEnv marks the environment of every process the tests start: Main
// sets it to the test binary's pid, and children inherit it (and pass it to
// theirs), so a process left behind is found even after its parent died.
// A process started with an environment of its own making (not built from
// os.Environ) is not marked, and not found.
const ownerEnv = "WIREPROOF_TEST_OWNER"

func markProcesses() { os.Setenv(ownerEnv, strconv.Itoa(os.Getpid())) }

// proc is a running process the tests started.
type proc struct {
	pid     int
	cmdline string
}

// waitProcesses waits until every marked process not in before has ended,
// or settleTime passed; it kills those left and returns them.
func waitProcesses(before map[int]bool) []proc {
	deadline := time.Now().Add(settleTime)
	for {
		var left []proc
		for _, p := range descendants() {
			if !before[p.pid] {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				KillProcess(p.pid)
			}
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func describe(ps []proc) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  pid %d: %s\n", p.pid, p.cmdline)
	}
	return b.String()
}
