//go:build !linux

package testkit

import "os/exec"

// dieWithParent does nothing outside Linux: there is no parent-death signal.
func dieWithParent(*exec.Cmd) {}
