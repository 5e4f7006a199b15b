//go:build unix

package testkit

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

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

// KillProcess sends pid SIGKILL.
func KillProcess(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// ProcessExists reports whether process pid exists (a zombie does), as
// kill(pid, 0) tells.
func ProcessExists(pid int) bool { return syscall.Kill(pid, 0) == nil }
