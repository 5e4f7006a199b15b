//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `record -- CMD` runs CMD in a process group of its own (so that what CMD
// starts can be killed with it). These tests check that an interrupt still
// reaches CMD the way it would without wireproof, and that nothing CMD
// started is left running afterwards.

// waitForFile waits until path exists and is not empty, and returns it.
func waitForFile(t *testing.T, path string, cmd *exec.Cmd, stderr *bytes.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 && bytes.HasSuffix(b, []byte("\n")) {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was never written; stderr:\n%s", path, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRecordInterruptReachesCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		// send delivers the interrupt to wireproof (pid; its process group).
		send func(pid int) error
	}{
		{"SIGINT to wireproof", func(pid int) error { return syscall.Kill(pid, syscall.SIGINT) }},
		// What a terminal's ^C does when wireproof is a background job or its
		// stdin is not the terminal: the signal goes to wireproof's group,
		// which the command is not in any more.
		{"SIGINT to wireproof's process group", func(pid int) error { return syscall.Kill(-pid, syscall.SIGINT) }},
		{"SIGTERM to wireproof", func(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			mark, pidFile := filepath.Join(tmp, "signal"), filepath.Join(tmp, "grandchild")
			// The command reports the signal it got, then exits 3; its
			// background sleep ignores SIGINT (a non-interactive shell's
			// background job does), so only wireproof's cleanup ends it.
			script := fmt.Sprintf(`trap 'echo INT > %[1]s; exit 3' INT; trap 'echo TERM > %[1]s; exit 3' TERM
sleep 37 & echo $! > %[2]s
wait`, mark, pidFile)
			cmd := exec.Command(wireproofBin, "record", "--upstream", "http://127.0.0.1:9", "-o", filepath.Join(tmp, "run.zst"), "--", "sh", "-c", script)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group to signal, not the test's
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			grandchild, err := strconv.Atoi(waitForFile(t, pidFile, cmd, &stderr))
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.send(cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}
			if code := exitStatus(t, cmd.Wait()); code != exitInterrupted {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
			}
			got, _ := os.ReadFile(mark)
			want := "INT"
			if strings.Contains(tc.name, "SIGTERM") {
				want = "TERM"
			}
			if strings.TrimSpace(string(got)) != want {
				t.Errorf("the command saw %q, want %q", strings.TrimSpace(string(got)), want)
			}
			waitAllDead(t, "the command's background sleep", []int{grandchild})
		})
	}
}

// TestRecordCommandLeavesNothingRunning: what the command leaves running when
// it exits is ended with it.
func TestRecordCommandLeavesNothingRunning(t *testing.T) {
	tmp := t.TempDir()
	pidFile := filepath.Join(tmp, "grandchild")
	cmd := exec.Command(wireproofBin, "record", "--upstream", "http://127.0.0.1:9", "-o", filepath.Join(tmp, "run.zst"), "--",
		"sh", "-c", "sleep 37 & echo $! > "+pidFile+"; exit 4")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := exitStatus(t, cmd.Wait()); code != 4 {
		t.Fatalf("exit status %d, want the command's 4; stderr:\n%s", code, stderr.String())
	}
	grandchild, err := strconv.Atoi(waitForFile(t, pidFile, cmd, &stderr))
	if err != nil {
		t.Fatal(err)
	}
	waitAllDead(t, "the command's background sleep", []int{grandchild})
}

// TestRecordCommandOnTerminal runs wireproof on a terminal (a pseudo-terminal
// from script(1)) as the foreground job, as a user at a shell does: the
// command may read the terminal (a background process group would be
// stopped by SIGTTIN) and ^C typed on it ends the command, which wireproof
// reports as 130.
func TestRecordCommandOnTerminal(t *testing.T) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) from util-linux for a pseudo-terminal")
	}
	run := func(t *testing.T, command string, input func(w io.Writer, out *lockedBuffer)) (int, string) {
		t.Helper()
		tmp := t.TempDir()
		// script runs the line with a shell: command goes in single quotes.
		line := fmt.Sprintf("%s record --upstream http://127.0.0.1:9 -o %s -- sh -c '%s'", wireproofBin, filepath.Join(tmp, "run.zst"), command)
		cmd := exec.Command(scriptBin, "-qec", line, "/dev/null")
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A command stopped by SIGTTIN would wait forever: this bounds it.
		hung := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
		defer hung.Stop()
		input(in, out)
		err = cmd.Wait()
		if !hung.Stop() {
			t.Fatalf("no exit within 60s (stopped in the background?); output %q", out.String())
		}
		in.Close()
		return exitStatus(t, err), out.String()
	}
	t.Run("reads the terminal", func(t *testing.T) {
		code, out := run(t, "read x; echo got-$x", func(w io.Writer, out *lockedBuffer) {
			io.WriteString(w, "hello\n")
		})
		if code != 0 || !strings.Contains(out, "got-hello") {
			t.Errorf("exit %d, output %q: want 0 and got-hello", code, out)
		}
	})
	t.Run("^C", func(t *testing.T) {
		code, out := run(t, "echo ready; sleep 37", func(w io.Writer, out *lockedBuffer) {
			deadline := time.Now().Add(60 * time.Second)
			for !strings.Contains(out.String(), "ready") {
				if time.Now().After(deadline) {
					t.Fatalf("the command never said ready; output %q", out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			io.WriteString(w, "\x03")
		})
		if code != exitInterrupted {
			t.Errorf("exit %d after ^C, want %d; output %q", code, exitInterrupted, out)
		}
	})
}

// TestRecordStdioCommandLeavesNothingRunning: with --stdio, a background job
// the command leaves holding its stdout is killed as soon as the command
// exits, so the tap's output ends at once and wireproof exits with the
// command's status (it used to wait for WaitDelay and exit 1, "WaitDelay
// expired before I/O complete", with the job still running).
func TestRecordStdioCommandLeavesNothingRunning(t *testing.T) {
	tmp := t.TempDir()
	pidFile := filepath.Join(tmp, "grandchild")
	cmd := exec.Command(wireproofBin, "record", "--stdio", "-o", filepath.Join(tmp, "run.zst"), "--",
		"sh", "-c", `sleep 37 & echo $! > `+pidFile+`; echo '{"jsonrpc":"2.0","method":"done"}'`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wireproof record --stdio: %v, want exit 0 like the command; stderr:\n%s", err, stderr.String())
	}
	if got, want := stdout.String(), "{\"jsonrpc\":\"2.0\",\"method\":\"done\"}\n"; got != want {
		t.Errorf("stdout %q, want the command's line %q", got, want)
	}
	grandchild, err := strconv.Atoi(waitForFile(t, pidFile, cmd, &stderr))
	if err != nil {
		t.Fatal(err)
	}
	waitAllDead(t, "the command's background sleep", []int{grandchild})
}
