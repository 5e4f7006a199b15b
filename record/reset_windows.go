//go:build windows

package record

import "golang.org/x/sys/windows"

// errConnReset is the error a read gets when the peer reset the connection:
// Winsock's own, which syscall.ECONNRESET (an invented errno on Windows)
// never matches.
const errConnReset = windows.WSAECONNRESET
