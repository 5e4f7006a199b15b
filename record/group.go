package record

import (
	"os/exec"
	"syscall"
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
//
// On Windows the group is a job object. The command is started suspended,
// put in the job and only then let run, so everything it starts is in the
// job too; the job is killed when the leader exits and when this process
// ends, however it ends (the kernel kills a job whose last handle closes).
// The command gets a console process group of its own
// (CREATE_NEW_PROCESS_GROUP), which ignores the console's ^C. There is no
// terminal foreground to hand over: the caller passes the interrupt it gets
// on with Signal, which sends the group a CTRL_BREAK_EVENT (see Signal).
type Group struct {
	cmd      *exec.Cmd
	wait     func() error
	groupSys // what the system needs besides: group_unix.go, group_windows.go
}

// StartGroup starts cmd as a Group. cmd.SysProcAttr is replaced.
func StartGroup(cmd *exec.Cmd) (*Group, error) { return startGroup(cmd) }

// Pid is the leader's process id, which is also the group's id (on Windows
// the id of its console process group).
func (g *Group) Pid() int { return g.cmd.Process.Pid }

// Signal sends sig to every process of the group.
//
// Windows has no signals to send. There SIGKILL terminates every process of
// the job; SIGINT, SIGTERM, SIGHUP and SIGQUIT send the group a
// CTRL_BREAK_EVENT (which a Go program gets as os.Interrupt), or terminate
// the job where that cannot be sent (this process has no console the group
// shares); 0 reports os.ErrProcessDone once no process is left in the job;
// any other signal is a *SignalError.
func (g *Group) Signal(sig syscall.Signal) error { return g.signal(sig) }

// Wait waits for the leader to exit, kills what is left of its group, stops
// the watchdog and gives the terminal back. Call it exactly once; it returns
// what cmd.Wait returned.
func (g *Group) Wait() error { return g.waitGroup() }
