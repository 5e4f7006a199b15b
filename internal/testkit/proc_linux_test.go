package testkit

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests look for processes in /proc and rely on the parent-death
// signal: both are Linux's.

func TestCheckLeaksFindsAProcess(t *testing.T) {
	shortSettle(t)
	r := &recorder{TB: t}
	CheckLeaks(r)
	cmd := HelperCommand("sleep")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait() // reaps it once killed
	errs := r.end()
	if len(errs) != 1 || !strings.Contains(errs[0], fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("a process left running was reported as %q, want its pid", errs)
	}
	if len(descendants()) != 0 {
		t.Errorf("the process left was not killed: %v", descendants())
	}
}

// TestHelperDiesWithParent: a helper outlives no test binary, even one
// killed with SIGKILL, when no cleanup runs.
func TestHelperDiesWithParent(t *testing.T) {
	CheckLeaks(t)
	parent := HelperCommand("spawn")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil {
		parent.Process.Kill()
		parent.Wait()
		t.Fatalf("reading the grandchild's pid: %v", err)
	}
	parent.Process.Kill()
	parent.Wait()
	// No event says when the grandchild is killed: poll. Once dead it may
	// stay a zombie until its new parent reaps it; that counts as ended.
	deadline := time.Now().Add(time.Minute)
	for running(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("helper %d outlived its killed parent", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether process pid exists and is no zombie.
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X'
}
