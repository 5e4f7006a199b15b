//go:build windows

package record

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// errNoThread is returned when a process started suspended has no thread to
// resume.
var errNoThread = errors.New("record: the suspended process has no thread to resume")

// startInJob starts cmd in a new tied job: suspended (CREATE_SUSPENDED is
// added to cmd.SysProcAttr's CreationFlags), put in the job and only then
// let run, so nothing it starts can escape the job. Should that fail, cmd is
// killed and reaped.
func startInJob(cmd *exec.Cmd) (*job, error) {
	j, err := newJob()
	if err != nil {
		return nil, err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	if err := cmd.Start(); err != nil {
		j.close()
		return nil, err
	}
	err = j.assign(cmd.Process.Pid)
	if err == nil {
		err = resumeProcess(cmd.Process.Pid)
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		j.close()
		return nil, err
	}
	return j, nil
}

// resumeProcess resumes the threads of process pid, started suspended: its
// main thread, the only one it has. os/exec closes the thread handle that
// CreateProcess returns, so the thread is found in a snapshot.
func resumeProcess(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return os.NewSyscallError("CreateToolhelp32Snapshot", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		if rerr := resumeThread(te.ThreadID); rerr != nil {
			return rerr
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return os.NewSyscallError("Thread32Next", err)
	}
	if resumed == 0 {
		return errNoThread
	}
	return nil
}

// resumeThread resumes thread tid.
func resumeThread(tid uint32) error {
	t, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, tid)
	if err != nil {
		return os.NewSyscallError("OpenThread", err)
	}
	defer windows.CloseHandle(t)
	_, err = windows.ResumeThread(t)
	return os.NewSyscallError("ResumeThread", err)
}
