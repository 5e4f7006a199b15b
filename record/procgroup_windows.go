//go:build windows

package record

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// procGroup is a Process's job: the process, as the leader of a console
// process group of its own, and everything it starts.
type procGroup struct{ job *job }

// startProcGroup starts cmd in a job of its own (startInJob), which dies
// with this process, as the leader of a console process group of its own.
// cmd.SysProcAttr is replaced.
func startProcGroup(cmd *exec.Cmd) (wait func() error, g *procGroup, err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	j, err := startInJob(cmd)
	if err != nil {
		return nil, nil, err
	}
	return cmd.Wait, &procGroup{job: j}, nil
}

// alive reports whether any process is left in the job.
func (g *procGroup) alive() bool { return g.job.alive() }

// kill terminates every process of the job.
func (g *procGroup) kill() { g.job.terminate() }

// release closes the job, once its processes are dead.
func (g *procGroup) release() { g.job.close() }

// sendSignal does what sig asks of the process (see deliver): SIGTERM is a
// CTRL_BREAK_EVENT to its console process group, SIGKILL terminates it.
func sendSignal(p *os.Process, sig syscall.Signal) { deliver(p.Pid, sig, p.Kill) }
