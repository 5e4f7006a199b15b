package testkit

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd's process when the test binary
// that started it dies, even by SIGKILL or go test's timeout, when no
// cleanup runs: a helper that runs until it is killed (a recorder, a
// server) would otherwise run on, orphaned. (The signal goes when the
// thread that started the child ends; the Go runtime does not end threads
// it has not locked, so in a test binary that is the process's death.)
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
