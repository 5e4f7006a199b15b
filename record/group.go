package record

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Group is a command started as the leader of a process group of its own
// and tied to this process as a whole: if this process dies, even by
// SIGKILL, the kernel kills the leader (StartTied) and a watchdog the rest of
// its group (what the command started: a shell's background jobs, a
// server's workers). When the leader exits, Wait kills what is left of the
// group, so nothing the command started outlives it.
//
// A process group of its own no longer receives what a terminal sends this
// process's group (^C). So when this process is the terminal's foreground
// job and the command's stdin is that terminal, the command's group is made
// the foreground job while it runs, as a shell does: ^C and ^Z go to it (and
// it may read the terminal), and the terminal is given back when it exits.
// Otherwise the caller passes the signals it gets on with Signal.
type Group struct {
	cmd      *exec.Cmd
	wait     func() error
	watchdog *groupWatchdog
	tty      int           // the terminal whose foreground the group took, or -1
	leader   chan struct{} // closed once the orphan killer returned
}

// StartGroup starts cmd as a Group. cmd.SysProcAttr is replaced.
func StartGroup(cmd *exec.Cmd) (*Group, error) {
	g := &Group{cmd: cmd, tty: -1}
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

// Pid is the leader's process id, which is also the group's id.
func (g *Group) Pid() int { return g.cmd.Process.Pid }

// Signal sends sig to every process of the group.
func (g *Group) Signal(sig syscall.Signal) error {
	return syscall.Kill(-g.cmd.Process.Pid, sig)
}

// Wait waits for the leader to exit, kills what is left of its group, stops
// the watchdog and gives the terminal back. Call it exactly once; it returns
// what cmd.Wait returned.
func (g *Group) Wait() error {
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
