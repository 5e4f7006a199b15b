//go:build windows

package record

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// groupSys is what a Group needs on Windows: its job and the orphan
// killer's end.
type groupSys struct {
	job    *job
	leader chan struct{} // closed once the orphan killer returned
}

// startGroup is StartGroup: cmd runs in a job (startInJob) as the leader of
// a console process group of its own.
func startGroup(cmd *exec.Cmd) (*Group, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	j, err := startInJob(cmd)
	if err != nil {
		return nil, err
	}
	g := &Group{cmd: cmd, wait: cmd.Wait, groupSys: groupSys{job: j, leader: make(chan struct{})}}
	kill := orphanKiller(j, cmd.Process.Pid)
	go func() {
		defer close(g.leader)
		kill()
	}()
	return g, nil
}

// orphanKiller returns a function that waits for the group's leader to exit
// and then terminates the rest of its job at once, as Linux's does (see
// group_linux.go): a process the command left holding its stdout would hold
// cmd.Wait's copying until WaitDelay. It waits on a handle of the leader,
// which is signalled when the leader exits; if none can be opened it
// returns at once, and Group.Wait's kill after cmd.Wait is the only one.
// The leader's id is not reused before cmd.Wait: os/exec holds a handle.
func orphanKiller(j *job, pid int) func() {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return func() {}
	}
	return func() {
		defer windows.CloseHandle(h)
		windows.WaitForSingleObject(h, windows.INFINITE)
		j.terminate()
	}
}

// signal does what sig asks of the group (see Group.Signal).
func (g *Group) signal(sig syscall.Signal) error {
	if sig == 0 {
		if g.job.alive() {
			return nil
		}
		return os.ErrProcessDone
	}
	return deliver(g.cmd.Process.Pid, sig, g.job.terminate)
}

// waitGroup is Wait: it waits for the leader to exit and terminates what is
// left of its job.
func (g *Group) waitGroup() error {
	err := g.wait()
	<-g.leader
	g.job.terminate()
	g.job.close()
	return err
}
