package testkit

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
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

// descendants returns the running processes (not zombies) whose environment
// carries this test binary's mark. Outside Linux it finds none.
func descendants() []proc {
	mark := []byte(ownerEnv + "=" + strconv.Itoa(os.Getpid()) + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), mark) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue // a zombie has ended; only its exit status is left
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out = append(out, proc{pid, strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))})
	}
	return out
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
				syscall.Kill(p.pid, syscall.SIGKILL)
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
