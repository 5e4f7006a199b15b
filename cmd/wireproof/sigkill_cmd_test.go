package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireproof/wireproof/bundle"
)

// These tests kill wireproof with SIGKILL, the one signal it cannot handle,
// and check that nothing it started lives on: its children must die with it
// by themselves.

// descendants lists the live processes below pid, children first.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := procPPid(p); ok {
			parent[p] = pp
		}
	}
	var out []int
	frontier := []int{pid}
	for len(frontier) > 0 {
		next := []int(nil)
		for p, pp := range parent {
			for _, f := range frontier {
				if pp == f {
					out = append(out, p)
					next = append(next, p)
				}
			}
		}
		frontier = next
	}
	return out
}

// procPPid reads a process's parent pid; ok is false for a process that is
// gone or a zombie (dead, waiting for init to reap it).
func procPPid(pid int) (ppid int, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, err == nil
}

func processLives(pid int) bool {
	_, ok := procPPid(pid)
	return ok
}

// waitAllDead waits until none of pids is alive. There is no event for the
// death of a process that is not our child, so it polls; the bound only
// turns a hang into a failure.
func waitAllDead(t *testing.T, what string, pids []int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var alive []string
		for _, p := range pids {
			if processLives(p) {
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
				alive = append(alive, fmt.Sprintf("%d (%s)", p, strings.ReplaceAll(string(cmdline), "\x00", " ")))
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s outlived wireproof's SIGKILL: %s", what, strings.Join(alive, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForChildren waits until pid has at least n descendants.
func waitForChildren(t *testing.T, pid, n int) []int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if d := descendants(pid); len(d) >= n {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never started %d children", pid, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitLine reads r until a line containing want, then drains the rest in
// the background so the writer never blocks.
func awaitLine(t *testing.T, r io.Reader, want string) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.Contains(sc.Text(), want) {
			go io.Copy(io.Discard, r)
			return
		}
	}
	t.Fatalf("the output ended without a line containing %q", want)
}

func runDirs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "wireproof-run-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestVerifyKilledLeavesNothingBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the live verifier twice")
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	cmd := exec.Command(wireproofBin, "verify", "--scenario", "idle", "--fault", "stalled-parent", "--timeout", "120", "--out", out)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	// The stalled parent keeps the run in phase running until the timeout.
	awaitLine(t, stdout, "] running")
	// The fixture server, started before the run reached phase running (and
	// the watchdog of its process group).
	children := descendants(cmd.Process.Pid)
	if !slices.ContainsFunc(children, func(p int) bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		return strings.Contains(string(b), "fixture\x00start")
	}) {
		t.Fatalf("no fixture server among wireproof's children %v", children)
	}
	dirs := runDirs(t, tmp)
	if len(dirs) != 1 {
		t.Fatalf("want one run directory in TMPDIR, have %v", dirs)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitAllDead(t, "the server and its process group", children)

	// The server's port is closed: the bundle written up to the kill names it.
	c, err := bundle.ReadFile(filepath.Join(out, "idle-1.zst"), nil)
	if err != nil {
		t.Fatalf("reading the bundle cut by SIGKILL: %v", err)
	}
	port := c.Header.Manifest.Options["port"]
	if port == "" {
		t.Fatal("the manifest names no port")
	}
	if conn, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		conn.Close()
		t.Errorf("port %s still accepts connections after wireproof was killed", port)
	}

	// The killed run could not remove its directory; the next run does, and
	// never one of a live process.
	if got := runDirs(t, tmp); len(got) != 1 || got[0] != dirs[0] {
		t.Fatalf("run directories after the kill: %v, want %v", got, dirs)
	}
	live := filepath.Join(tmp, fmt.Sprintf("wireproof-run-%d-0-live", os.Getpid()))
	if err := os.Mkdir(live, 0o700); err != nil {
		t.Fatal(err)
	}
	notOurs := filepath.Join(tmp, "wireproof-run-notes")
	if err := os.Mkdir(notOurs, 0o700); err != nil {
		t.Fatal(err)
	}
	again := exec.Command(wireproofBin, "verify", "--scenario", "idle", "--fault", "stalled-parent", "--timeout", "1", "--out", filepath.Join(tmp, "out2"))
	again.Env = cmd.Env
	if b, err := again.CombinedOutput(); exitStatus(t, err) != exitCheckFailed {
		t.Fatalf("second run: %v\n%s", err, b)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("the killed run's directory %s was not removed by the next run (%v)", dirs[0], err)
	}
	for _, keep := range []string{live, notOurs} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed, but its owner is alive or unknown: %v", keep, err)
		}
	}
	if got := runDirs(t, tmp); len(got) != 2 {
		t.Errorf("run directories after the second run: %v, want only the two kept", got)
	}
}

func TestRecordKilledLeavesNoCommand(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		n    int // the processes below wireproof to wait for
	}{
		{"proxy", []string{"record", "--upstream", "http://127.0.0.1:9", "-o", filepath.Join(tmp, "proxy.zst"), "--", "sleep", "60"}, 1},
		{"stdio", []string{"record", "--stdio", "-o", filepath.Join(tmp, "stdio.zst"), "--", "sleep", "60"}, 1},
		// The command's own child is not tied to wireproof by the kernel:
		// the watchdog of the command's process group kills it.
		{"proxy, a grandchild", []string{"record", "--upstream", "http://127.0.0.1:9", "-o", filepath.Join(tmp, "grand.zst"), "--",
			"sh", "-c", "sleep 37 & exec sleep 38"}, 3}, // sleep 37, sleep 38, the watchdog
		{"stdio, a grandchild", []string{"record", "--stdio", "-o", filepath.Join(tmp, "stdio-grand.zst"), "--",
			"sh", "-c", "sleep 37 & exec sleep 38"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(wireproofBin, tc.args...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			children := waitForChildren(t, cmd.Process.Pid, tc.n)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			waitAllDead(t, "the recorded command", children)
		})
	}
}

// TestFixtureExitsWithItsParent: a fixture server whose launcher is gone has
// nobody to stop it, so it stops itself. Its launcher here is a shell, which
// sets no parent-death signal.
func TestFixtureExitsWithItsParent(t *testing.T) {
	tmp := t.TempDir()
	boot := filepath.Join(tmp, "bootstrap.json")
	b := fmt.Sprintf(`{"mode":"desktop","port":0,"host":"127.0.0.1","t3Home":%q,"desktopBootstrapToken":"tok"}`, filepath.Join(tmp, "home"))
	if err := os.WriteFile(boot, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	// The shell starts the fixture in the background and waits for it.
	sh := exec.Command("sh", "-c", `"$0" fixture start --bootstrap-fd 3 3<"$1" & wait`, wireproofBin, boot)
	stdout, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Process.Kill(); sh.Wait() })
	awaitLine(t, stdout, "startup phase: complete")
	fixture := waitForChildren(t, sh.Process.Pid, 1)
	sh.Process.Signal(syscall.SIGKILL)
	sh.Wait()
	waitAllDead(t, "the orphaned fixture server", fixture)
}
