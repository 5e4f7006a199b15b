package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runCLI runs wireproof in-process, as main does, with args and an empty
// stdin, and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := newRootCommand()
	cmd.SetArgs(append([]string{}, args...)) // nil would mean os.Args
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	code := execute(context.Background(), cmd, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestUsageErrorsAreTyped: every kind of usage mistake exits 2 because it
// is a usageError (flag parsing, an argument count, an unknown verb, a
// verb's own check), and an error that only reads like one does not.
func TestUsageErrorsAreTyped(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string // a part of stderr
	}{
		{"unknown verb", []string{"bogus"}, `unknown command "bogus" for "wireproof"`},
		{"mistyped verb", []string{"inspct"}, "Did you mean this?\n\tinspect\n"},
		{"unknown flag", []string{"checks", "--bogus"}, "unknown flag: --bogus"},
		{"unknown shorthand", []string{"checks", "-z"}, "unknown shorthand flag: 'z' in -z"},
		{"bad flag value", []string{"replay", "--jobs", "many", smallBundle}, `invalid argument "many" for "--jobs" flag`},
		{"flag without its value", []string{"inspect", smallBundle, "--seq"}, "flag needs an argument: --seq"},
		{"argument count", []string{"inspect"}, "inspect: accepts 1 arg(s), received 0"},
		{"subcommand argument", []string{"fixture", "faults", "x"}, `unknown command "x" for "wireproof fixture faults"`},
		{"completion argument", []string{"completion", "bash", "x"}, `unknown command "x" for "wireproof completion bash"`},
		{"a verb's own check", []string{"diff", "--context", "0", smallBundle, smallBundle}, "--context must be at least 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.stderr)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty:\n%s", stdout)
			}
		})
	}

	// The words of a usage error in an error of another kind do not make
	// it one: before the errors were typed, any error containing "invalid
	// argument" (EINVAL's text) exited 2.
	for _, err := range []error{
		unreadableError{errorString("read x.zst: invalid argument")},
		errorString("unknown flag in the server's reply"),
	} {
		if got := exitCode(err, false); got == exitUsage {
			t.Errorf("exitCode(%q) = %d: a usage error by its text", err, got)
		}
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// TestRootAlonePrintsHelp: wireproof with no argument prints its help and
// exits 0, as it did before the root validated its arguments.
func TestRootAlonePrintsHelp(t *testing.T) {
	code, stdout, stderr := runCLI(t)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, verb := range []string{"verify", "replay", "inspect", "record", "view"} {
		if !strings.Contains(stdout, "\n  "+verb+" ") {
			t.Errorf("the help does not list %s:\n%s", verb, stdout)
		}
	}
}
