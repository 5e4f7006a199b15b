//go:build unix

package record

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// groupSys is what a Group needs on unix: its watchdog, the terminal it
// took and the orphan killer's end.
type groupSys struct {
	watchdog *groupWatchdog
	tty      int           // the terminal whose foreground the group took, or -1
	leader   chan struct{} // closed once the orphan killer returned
}

// startGroup is StartGroup: cmd runs as the leader of a process group of
// its own, given the terminal's foreground if it has it.
func startGroup(cmd *exec.Cmd) (*Group, error) {
	g := &Group{cmd: cmd, groupSys: groupSys{tty: -1}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if fd, ok := foregroundTerminal(cmd.Stdin); ok {
		// Ctty is this process's descriptor: the child sets the foreground
		// before it arranges its own descriptors.
		cmd.SysProcAttr.Foreground, cmd.SysProcAttr.Ctty = true, fd
		g.tty = fd
	}
	wait, err := StartTied(cmd, syscall.SIGKILL)
	if err != nil {
		return nil, err
	}
	g.wait = wait
	g.watchdog = startGroupWatchdog(cmd.Process.Pid)
	g.leader = make(chan struct{})
	kill := orphanKiller(cmd.Process.Pid)
	go func() {
		defer close(g.leader)
		kill()
	}()
	return g, nil
}

// foregroundTerminal reports the descriptor of in when it is a terminal
// whose foreground process group is this process's.
func foregroundTerminal(in any) (int, bool) {
	f, ok := in.(*os.File)
	if !ok || f == nil {
		return -1, false
	}
	fd := int(f.Fd())
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil { // not a terminal, or not ours
		return -1, false
	}
	return fd, pgrp == syscall.Getpgrp()
}

// signal sends sig to every process of the group.
func (g *Group) signal(sig syscall.Signal) error {
	return syscall.Kill(-g.cmd.Process.Pid, sig)
}

// waitGroup is Wait: it waits for the leader to exit, kills what is left of
// its group, stops the watchdog and gives the terminal back.
func (g *Group) waitGroup() error {
	err := g.wait()
	<-g.leader
	syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	g.watchdog.stop()
	if g.tty >= 0 {
		takeForeground(g.tty)
	}
	return err
}

// takeForeground makes this process's group the foreground job of the
// terminal fd again. A background process that sets the foreground is sent
// SIGTTOU, which would stop it: the signal is ignored for the call.
func takeForeground(fd int) {
	if !signal.Ignored(syscall.SIGTTOU) {
		signal.Ignore(syscall.SIGTTOU)
		defer signal.Reset(syscall.SIGTTOU)
	}
	_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, syscall.Getpgrp())
}
