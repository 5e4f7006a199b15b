package testkit

import (
	"os"
	"os/exec"
)

// helperEnv names the helper mode a re-executed test binary runs.
const helperEnv = "WIREPROOF_TEST_HELPER"

// HelperArgv is the argv that re-executes this test binary as a helper
// process: no test runs in it (Main runs the helper mode instead). Extra
// arguments are passed on; a helper reads them from os.Args.
func HelperArgv(args ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return append([]string{exe, "-test.run=^$"}, args...)
}

// HelperEnv is this process's environment with helper mode selected. A
// race-enabled helper would otherwise sleep a second at exit waiting for
// race reports; it halts on the first one instead.
func HelperEnv(mode string) []string {
	return append(os.Environ(), helperEnv+"="+mode, "GORACE=atexit_sleep_ms=0 halt_on_error=1")
}

// HelperCommand returns a command that runs this test binary in helper
// mode: Main calls Options.Helpers[mode] in the child and exits with what
// it returns. On Linux the child is killed when this process dies, however
// it dies. The caller may append to its Env and set its streams.
func HelperCommand(mode string, args ...string) *exec.Cmd {
	argv := HelperArgv(args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = HelperEnv(mode)
	dieWithParent(cmd)
	return cmd
}
