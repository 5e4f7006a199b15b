package main

import "testing"

// TestArgumentMistakes runs wireproof (in-process, as main does) with the mistakes a new user makes
// first: a verb without its argument, and a directory where one bundle file
// is read. Each message names the verb and what it takes, and the exit code
// is the documented one (2 usage, 3 unreadable).
func TestArgumentMistakes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // the whole of stderr
	}{
		{"replay without bundles", []string{"replay"}, exitUsage,
			"wireproof: replay: requires at least 1 arg(s), only received 0; usage: wireproof replay [flags] BUNDLE|DIR|s3://BUCKET/PREFIX...\n"},
		{"index without bundles", []string{"index"}, exitUsage,
			"wireproof: index: requires at least 1 arg(s), only received 0; usage: wireproof index [-o INDEX.ndjson] [--stats] DIR|BUNDLE|s3://BUCKET/PREFIX|INDEX.ndjson... [flags]\n"},
		{"inspect without a bundle", []string{"inspect"}, exitUsage,
			"wireproof: inspect: accepts 1 arg(s), received 0; usage: wireproof inspect [flags] BUNDLE|s3://BUCKET/KEY\n"},
		{"report of two bundles", []string{"report", smallBundle, smallBundle}, exitUsage,
			"wireproof: report: accepts 1 arg(s), received 2; usage: wireproof report [-o report.html] BUNDLE|s3://BUCKET/KEY [flags]\n"},
		{"checks with an argument", []string{"checks", "idle"}, exitUsage,
			`wireproof: checks: unknown command "idle" for "wireproof checks"; usage: wireproof checks [--json] [--suite ID] [flags]` + "\n"},
		{"fixture start with an argument", []string{"fixture", "start", "x"}, exitUsage,
			`wireproof: fixture start: unknown command "x" for "wireproof fixture start"; usage: wireproof fixture start [flags]` + "\n"},
		{"inspect a directory", []string{"inspect", dir}, exitUnreadable,
			"wireproof: " + dir + " is a directory, not a bundle: inspect reads one bundle file (replay, index and view take directories)\n"},
		{"report a directory", []string{"report", dir}, exitUnreadable,
			"wireproof: " + dir + " is a directory, not a bundle: report reads one bundle file (replay, index and view take directories)\n"},
		{"export a directory", []string{"export", "--har", dir + "/x.har", dir}, exitUnreadable,
			"wireproof: " + dir + " is a directory, not a bundle: export reads one bundle file (replay, index and view take directories)\n"},
		{"diff against a directory", []string{"diff", smallBundle, dir}, exitUnreadable,
			"wireproof: " + dir + " is a directory, not a bundle: diff reads one bundle file (replay, index and view take directories)\n"},
		{"playback a directory", []string{"playback", dir}, exitUnreadable,
			"wireproof: " + dir + " is a directory, not a bundle: playback reads one bundle file (replay, index and view take directories)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty:\n%s", stdout)
			}
			if got := stderr; got != tc.stderr {
				t.Errorf("stderr:\n got %q\nwant %q", got, tc.stderr)
			}
		})
	}
}
