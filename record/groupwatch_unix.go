//go:build unix

package record

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// groupWatchdog kills a supervised process group if this process dies without
// doing it itself (SIGKILL, a crash). The kernel's parent-death signal
// (StartTied) reaches the group's leader only; what the leader started (a
// provider process, a shell's children) would live on under init.
//
// The watchdog is a shell in a process group of its own, so a terminal's ^C
// does not end it first, blocked reading a pipe whose only writer is this
// process. When this process dies, for whatever reason, the kernel closes
// the pipe, the read ends and the shell kills the group. When the group is
// ended normally, stop kills the watchdog before it can act.
type groupWatchdog struct {
	cmd *exec.Cmd
	w   *os.File // held open for the life of the watch
}

// watchdogScript reads until EOF (this process gone), then kills the group
// given as $1.
const watchdogScript = `read _; kill -KILL -"$1" 2>/dev/null`

// startGroupWatchdog watches process group pgid. It returns nil when no shell
// can be started: the leader is still tied to this process by StartTied.
func startGroupWatchdog(pgid int) *groupWatchdog {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "wireproof-group-watchdog", strconv.Itoa(pgid))
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil
	}
	return &groupWatchdog{cmd: cmd, w: w}
}

// stop ends the watchdog without letting it kill anything: it is killed
// before its pipe is closed.
func (g *groupWatchdog) stop() {
	if g == nil {
		return
	}
	g.cmd.Process.Kill()
	g.cmd.Wait()
	g.w.Close()
}
