package verify

import "testing"

// TestCheckServerCmdAcceptsOneCommand: operators inside quotes or escaped,
// "env" for the environment and '=' past the first word are one command.
func TestCheckServerCmdAcceptsOneCommand(t *testing.T) {
	for _, cmd := range []string{
		"node /tmp/t3code/apps/server/src/bin.ts",
		"/usr/local/bin/wireproof fixture",
		"env T3CODE_TELEMETRY=0 node /t3/apps/server/src/bin.ts",
		`node /t3/bin.ts --filter 'a|b;c&d'`,
		`node /t3/bin.ts --filter "a && b"`,
		`node /t3/bin.ts a\;b`,
		"node --max-old-space-size=4096 /t3/bin.ts",
	} {
		if err := checkServerCmd(cmd); err != nil {
			t.Errorf("%q: %v, want it accepted", cmd, err)
		}
	}
}
