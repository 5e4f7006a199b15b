package record

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// orphanKiller returns a function that waits for the group's leader to exit
// and then kills the rest of its group at once. Otherwise a background job
// that holds the command's stdout would hold cmd.Wait's copying (a tapped
// stdout) until WaitDelay. It watches a pidfd of the leader, which becomes
// readable when the leader exits, and never reaps it (StartTied's cmd.Wait
// does, from the start). A leader that is gone before its pidfd could be
// opened (ESRCH: it exited and was reaped already) has its group killed at
// once. If no pidfd can be had otherwise (a kernel older than 5.3), it
// returns at once, and Group.Wait's kill after the reap is the only one, as
// before. The group's id is not reused while the group has members.
func orphanKiller(pid int) func() {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return func() { syscall.Kill(-pid, syscall.SIGKILL) }
	}
	if err != nil {
		return func() {}
	}
	return func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				break
			}
		}
		syscall.Kill(-pid, syscall.SIGKILL)
	}
}
