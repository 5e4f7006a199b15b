//go:build unix

package record

import "syscall"

// errConnReset is the error a read gets when the peer reset the connection.
const errConnReset = syscall.ECONNRESET
