package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wireproof/wireproof/fixtures"
	"github.com/wireproof/wireproof/model"
)

// verbGrammar is what one verb's flags must be under the one grammar.
type verbGrammar struct {
	out       bool              // it writes an output named by -o/--out
	aliases   map[string]string // hidden older spellings of its flags: old -> current
	durations []string          // its duration flags, each taking a Go duration or seconds
	completes map[string]string // flags with a closed set of values -> one value completion offers
}

// grammar is the table of every verb. A verb added to the CLI without a row
// here fails TestGrammarEveryVerb: say what its grammar is.
var grammar = map[string]verbGrammar{
	"checks":  {completes: map[string]string{"suite": "protocol-conformance"}},
	"diff":    {},
	"export":  {out: true, aliases: map[string]string{"har": "out"}},
	"fixture": {},
	"fixture start": {completes: map[string]string{
		"fault": "duplicate-notification", "serialization": "ndjson", "log-level": "debug"}},
	"fixture faults": {},
	"index":          {out: true},
	"model":          {aliases: map[string]string{"addr": "listen"}, completes: map[string]string{"fault": model.Faults[0]}},
	"inspect":        {durations: []string{"from", "to"}, completes: map[string]string{"kind": "ws.message"}},
	"playback": {out: true, aliases: map[string]string{"output": "out"},
		completes: map[string]string{"timing": "fast"}},
	"provider":        {},
	"provider claude": {},
	"provider wrap":   {},
	"record":          {out: true, aliases: map[string]string{"output": "out"}},
	"replay":          {},
	"report":          {out: true},
	"scan":            {},
	"upload":          {},
	"verify": {out: true, durations: []string{"timeout"}, completes: map[string]string{
		"scenario": "nested", "fault": "stalled-parent", "serialization": "ndjson", "keep": "failed"}},
	"view": {},
}

// verbs returns every verb of the tree by its path ("fixture start"),
// cobra's own (help, completion) left out.
func verbs(root *cobra.Command) map[string]*cobra.Command {
	out := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" || strings.HasPrefix(sub.Name(), "__") {
				continue
			}
			out[strings.TrimPrefix(sub.CommandPath(), root.Name()+" ")] = sub
			walk(sub)
		}
	}
	walk(root)
	return out
}

// TestGrammarEveryVerb holds every verb to the one grammar: an output is
// -o/--out and nothing else takes -o or is called --output; an older
// spelling is a hidden alias that sets the current flag; a duration takes a
// Go duration and plain seconds; a flag with a closed set of values
// completes them; a usage error is exit 2 and a mistyped flag gets a
// suggestion.
func TestGrammarEveryVerb(t *testing.T) {
	all := verbs(newRootCommand())
	var names []string
	for name := range all {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		g, ok := grammar[name]
		if !ok {
			t.Errorf("verb %q has no row in the grammar table", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			cmd := all[name]
			flags := cmd.Flags()
			if cmd.DisableFlagParsing {
				return // provider claude: the Claude CLI's own flags
			}
			flags.VisitAll(func(f *pflag.Flag) {
				if f.Shorthand == "o" && f.Name != "out" {
					t.Errorf("-o is --%s, want --out", f.Name)
				}
				if (f.Name == "output" || f.Name == "outfile") && !f.Hidden {
					t.Errorf("a visible --%s: an output is -o/--out", f.Name)
				}
				if (f.Name == "addr" || f.Name == "address" || f.Name == "bind") && !f.Hidden {
					t.Errorf("a visible --%s: the address a verb serves on is --listen", f.Name)
				}
				if f.Name == "quiet" && f.Shorthand != "q" || f.Shorthand == "q" && f.Name != "quiet" {
					t.Errorf("--%s -%s: -q is --quiet", f.Name, f.Shorthand)
				}
				if f.Value.Type() == "duration" {
					if _, ours := f.Value.(durationValue); !ours {
						t.Errorf("--%s is a duration that does not take plain seconds", f.Name)
					}
					if !slices.Contains(g.durations, f.Name) {
						t.Errorf("--%s is a duration the table does not list", f.Name)
					}
				}
			})
			out := flags.Lookup("out")
			if g.out != (out != nil) || out != nil && out.Shorthand != "o" {
				t.Errorf("-o/--out: got %v, want it: %v", out != nil, g.out)
			}
			for old, cur := range g.aliases {
				c := freshVerb(t, name)
				if err := c.ParseFlags([]string{"--" + old, "x.out"}); err != nil {
					t.Fatalf("--%s: %v", old, err)
				}
				if got := c.Flags().Lookup(cur).Value.String(); got != "x.out" {
					t.Errorf("--%s x.out set --%s to %q", old, cur, got)
				}
				if strings.Contains(c.UsageString(), "--"+old+" ") {
					t.Errorf("the help lists the alias --%s", old)
				}
			}
			for _, d := range g.durations {
				for arg, want := range map[string]time.Duration{"10": 10 * time.Second, "10s": 10 * time.Second, "1.5": 1500 * time.Millisecond, "200ms": 200 * time.Millisecond, "1m30s": 90 * time.Second} {
					c := freshVerb(t, name)
					if err := c.ParseFlags([]string{"--" + d, arg}); err != nil {
						t.Errorf("--%s %s: %v", d, arg, err)
						continue
					}
					if got := *c.Flags().Lookup(d).Value.(durationValue).d; got != want {
						t.Errorf("--%s %s = %v, want %v", d, arg, got, want)
					}
				}
				code, _, stderr := runCLI(t, append(strings.Fields(name), "--"+d, "soon")...)
				if code != exitUsage || !strings.Contains(stderr, "want a duration (10s, 1m30s, 200ms) or seconds (10, 0.5)") {
					t.Errorf("--%s soon: exit %d, stderr %q; want a usage error saying what a duration is", d, code, stderr)
				}
			}
			for flag, value := range g.completes {
				code, stdout, stderr := runCLI(t, append(append([]string{cobra.ShellCompRequestCmd}, strings.Fields(name)...), "--"+flag, "")...)
				if code != 0 {
					t.Errorf("completing --%s: exit %d: %s", flag, code, stderr)
				}
				var got []string
				for _, line := range strings.Split(stdout, "\n") {
					v, _, _ := strings.Cut(line, "\t")
					got = append(got, v)
				}
				if !slices.Contains(got, value) {
					t.Errorf("completing --%s offers %q, want %q among them", flag, got, value)
				}
			}
			// Any flag mistyped by one letter is refused as a usage error
			// that names the flag meant.
			var first string
			flags.VisitAll(func(f *pflag.Flag) {
				if first == "" && !f.Hidden && f.Name != "help" && len(f.Name) > 3 {
					first = f.Name
				}
			})
			if first != "" {
				typo := first[:len(first)-1] + "X"
				code, _, stderr := runCLI(t, append(strings.Fields(name), "--"+typo)...)
				if code != exitUsage || !strings.Contains(stderr, "unknown flag: --"+typo) || !strings.Contains(stderr, "Did you mean this?\n\t--"+first) {
					t.Errorf("--%s: exit %d, stderr %q; want exit %d suggesting --%s", typo, code, stderr, exitUsage, first)
				}
			}
		})
	}
	for name := range grammar {
		if all[name] == nil {
			t.Errorf("the grammar table lists %q, which is no verb", name)
		}
	}
}

// freshVerb finds a verb in a new tree, so each parse starts from defaults.
func freshVerb(t *testing.T, name string) *cobra.Command {
	t.Helper()
	c, _, err := newRootCommand().Find(strings.Fields(name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCompletionsAreTheValues: what --fault and --scenario complete is the
// fault table (the server's, then the scripted model's) and the scenarios,
// every one.
func TestCompletionsAreTheValues(t *testing.T) {
	_, stdout, _ := runCLI(t, cobra.ShellCompRequestCmd, "verify", "--fault", "")
	var want []string
	for _, f := range fixtures.Faults {
		want = append(want, f.Name+"\ttrips "+f.Check)
	}
	for _, f := range model.Faults {
		want = append(want, f+"\twith --provider-cli: trips "+model.FaultChecks[f])
	}
	want = append(want, ":4") // ShellCompDirectiveNoFileComp
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(stdout), "\n")); diff != "" {
		t.Errorf("verify --fault completions (-want +got):\n%s", diff)
	}
	_, stdout, _ = runCLI(t, cobra.ShellCompRequestCmd, "verify", "--scenario", "")
	want = []string{"all\tevery scenario, then the restart check", "idle", "active", "native", "nested", ":4"}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(stdout), "\n")); diff != "" {
		t.Errorf("verify --scenario completions (-want +got):\n%s", diff)
	}
}

// TestInspectQuiet: inspect -q prints the timeline alone, the same lines
// the full output prints after its summary.
func TestInspectQuiet(t *testing.T) {
	code, full, stderr := runCLI(t, "inspect", smallBundle)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, stderr)
	}
	_, timeline, ok := strings.Cut(full, "\n\n")
	if !ok {
		t.Fatalf("no blank line between summary and timeline:\n%s", full)
	}
	for _, args := range [][]string{{"inspect", "-q", smallBundle}, {"inspect", "--quiet", smallBundle}} {
		code, quiet, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if diff := cmp.Diff(timeline, quiet); diff != "" {
			t.Errorf("%v (-the timeline of inspect +got):\n%s", args, diff)
		}
	}
	// Filters, and a cut bundle, as without -q.
	code, quiet, stderr := runCLI(t, "inspect", "-q", "--kind", "gate", smallBundle)
	if code != 0 || len(strings.Split(strings.TrimSpace(quiet), "\n")) != 2 || !strings.Contains(quiet, "gate.request") {
		t.Errorf("inspect -q --kind gate: exit %d, stdout %q, stderr %q; want the two gate events", code, quiet, stderr)
	}
	code, _, stderr = runCLI(t, "inspect", "-q", cutBundle)
	if code != 0 || !strings.Contains(stderr, "is truncated") {
		t.Errorf("inspect -q of a cut bundle: exit %d, stderr %q; want exit 0 and the notice", code, stderr)
	}
	code, quiet, _ = runCLI(t, "inspect", "-q", "--seq", "9999", smallBundle)
	if code != 0 || !strings.HasPrefix(quiet, "0 events matched the filters") {
		t.Errorf("inspect -q --seq 9999: exit %d, stdout %q; want the no-match note", code, quiet)
	}
}

// TestRecordCommandThatCannotStart: a command that is not found, or is found
// but cannot be executed, exits 127 and leaves no bundle behind.
func TestRecordCommandThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "garbage")
	if err := os.WriteFile(notExec, []byte("\x00\x01 not a program"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, command string }{
		{"not found", filepath.Join(dir, "no-such-command")},
		{"not a program", notExec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".zst")
			for _, extra := range [][]string{nil, {"--stdio"}} {
				args := append([]string{"record", "--upstream", "http://127.0.0.1:9", "-o", out}, extra...)
				code, stdout, stderr := runCLI(t, append(args, "--", tc.command)...)
				if code != 127 || !strings.Contains(stderr, "cannot run "+tc.command) {
					t.Errorf("%v: exit %d, stderr %q; want 127 naming the command", extra, code, stderr)
				}
				if stdout != "" {
					t.Errorf("%v: stdout %q, want nothing", extra, stdout)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("%v: the bundle was left behind: %v", extra, err)
				}
			}
		})
	}
}

// TestInspectAroundMarksTheSeq: inspect --around N marks the line of seq N
// (where the check failed) with >, and only that line; the columns of the
// others stay aligned with it.
func TestInspectAroundMarksTheSeq(t *testing.T) {
	code, stdout, stderr := runCLI(t, "inspect", "-q", "--around", "10", smallBundle)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 17 { // seqs 2-18
		t.Fatalf("%d lines, want 17:\n%s", len(lines), stdout)
	}
	for _, line := range lines {
		seq := strings.Fields(strings.TrimPrefix(line, ">"))[0]
		marked := strings.HasPrefix(line, "> ")
		if marked != (seq == "10") || !marked && !strings.HasPrefix(line, "  ") {
			t.Errorf("line %q: marked %v", line, marked)
		}
		if len(line) < 10 || line[2:8] != fmt.Sprintf("%6s", seq) {
			t.Errorf("line %q: the seq column moved", line)
		}
	}
	// Without --around nothing is marked.
	_, stdout, _ = runCLI(t, "inspect", "-q", "--seq", "2-18", smallBundle)
	if strings.Contains(stdout, "\n> ") || strings.HasPrefix(stdout, "> ") {
		t.Errorf("--seq marked a line:\n%s", stdout)
	}
}
