//go:build unix

package record

import "syscall"

// unixSignalNames spells the signals of signalNames that only unix has.
var unixSignalNames = map[syscall.Signal]string{
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}
