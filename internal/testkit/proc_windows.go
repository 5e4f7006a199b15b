//go:build windows

package testkit

import (
	"os"

	"golang.org/x/sys/windows"
)

// descendants finds none on Windows: a process's environment, which marks
// it as the tests', cannot be read there without reading its memory. Leaked
// processes are not reported (CheckLeaks still checks goroutines).
func descendants() []proc { return nil }

// KillProcess terminates pid.
func KillProcess(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
		p.Release()
	}
}

// ProcessExists reports whether process pid exists and has not exited.
func ProcessExists(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}
