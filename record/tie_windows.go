//go:build windows

package record

import (
	"os/exec"
	"syscall"
)

// startTied is StartTied: cmd runs in a tied job of its own (startInJob),
// which lets go of what is left once cmd has exited.
func startTied(cmd *exec.Cmd, _ syscall.Signal) (wait func() error, err error) {
	j, err := startInJob(cmd)
	if err != nil {
		return nil, err
	}
	return func() error {
		err := cmd.Wait()
		j.untie()
		j.close()
		return err
	}, nil
}
