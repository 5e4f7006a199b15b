//go:build windows

package record

import (
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// job is a Windows job object: a command and everything it starts. While
// the job is tied, the kernel terminates its processes when its last handle
// closes, so when this process ends, however it ends.
type job struct {
	mu sync.Mutex
	h  windows.Handle // 0 once closed: a closed handle's value may be reused
}

// newJob creates a tied job.
func newJob() (*job, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, os.NewSyscallError("CreateJobObject", err)
	}
	j := &job{h: h}
	if err := j.limit(windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE); err != nil {
		j.close()
		return nil, err
	}
	return j, nil
}

// limit sets the job's limit flags.
func (j *job) limit(flags uint32) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = flags
	_, err := windows.SetInformationJobObject(j.h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	return os.NewSyscallError("SetInformationJobObject", err)
}

// untie lets the job's processes outlive its last handle.
func (j *job) untie() error { return j.limit(0) }

// assign puts process pid in the job.
func (j *job) assign(pid int) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return os.NewSyscallError("OpenProcess", err)
	}
	defer windows.CloseHandle(p)
	j.mu.Lock()
	defer j.mu.Unlock()
	return os.NewSyscallError("AssignProcessToJobObject", windows.AssignProcessToJobObject(j.h, p))
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// x/sys/windows does not define.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                     int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	TotalPageFaultCount, TotalProcesses                uint32
	ActiveProcesses, TotalTerminatedProcesses          uint32
}

// alive reports whether any process is left in the job: false once it is
// closed, true when the job cannot be asked.
func (j *job) alive() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return false
	}
	var info jobAccounting
	err := windows.QueryInformationJobObject(j.h, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return err != nil || info.ActiveProcesses > 0
}

// terminate ends every process of the job, with exit code 1 (as
// os.Process.Kill does). It returns os.ErrProcessDone once the job is closed.
func (j *job) terminate() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return os.ErrProcessDone
	}
	return os.NewSyscallError("TerminateJobObject", windows.TerminateJobObject(j.h, 1))
}

// close closes the job's handle: if the job is tied, what is left in it is
// terminated.
func (j *job) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h != 0 {
		windows.CloseHandle(j.h)
		j.h = 0
	}
}
