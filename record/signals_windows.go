//go:build windows

package record

import "syscall"

// unixSignalNames is empty: Windows has none of the signals that only unix
// has (syscall defines no SIGUSR1 there).
var unixSignalNames = map[syscall.Signal]string{}
