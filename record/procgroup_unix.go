//go:build unix

package record

import (
	"os"
	"os/exec"
	"syscall"
)

// procGroup is a Process's process group, and the watchdog that kills it
// should this process die first.
type procGroup struct {
	pgid     int
	watchdog *groupWatchdog
}

// startProcGroup starts cmd as the leader of a process group of its own,
// tied to this process (StartTied, SIGKILL), and starts the group's
// watchdog. cmd.SysProcAttr is replaced.
func startProcGroup(cmd *exec.Cmd) (wait func() error, g *procGroup, err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	wait, err = StartTied(cmd, syscall.SIGKILL)
	if err != nil {
		return nil, nil, err
	}
	return wait, &procGroup{pgid: cmd.Process.Pid, watchdog: startGroupWatchdog(cmd.Process.Pid)}, nil
}

// alive reports whether any process is left in the group.
func (g *procGroup) alive() bool { return syscall.Kill(-g.pgid, 0) == nil }

// kill sends SIGKILL to every process of the group.
func (g *procGroup) kill() { syscall.Kill(-g.pgid, syscall.SIGKILL) }

// release stops the watchdog, once the group is dead.
func (g *procGroup) release() { g.watchdog.stop() }

// sendSignal sends sig to the group's leader.
func sendSignal(p *os.Process, sig syscall.Signal) { p.Signal(sig) }
