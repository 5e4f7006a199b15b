package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The grammar every verb shares (docs/cli.md, "One grammar"):
//
//   - an output file or directory is -o/--out (outFlag); an older spelling
//     stays as a hidden alias (aliasFlags);
//   - a duration is a Go duration or plain seconds (durationFlag);
//   - a flag with a closed set of values completes them (completeValues);
//   - a mistyped verb or flag gets suggestions (unknownVerb, flagError).

// outFlag binds -o/--out, the output of a verb, to p.
func outFlag(f *pflag.FlagSet, p *string, usage string) {
	f.StringVarP(p, "out", "o", "", usage)
}

// aliasFlags makes each old name of a flag (old -> current) a hidden alias
// of the current one: --old VALUE sets the current flag, and only the
// current name is listed in the help.
func aliasFlags(f *pflag.FlagSet, aliases map[string]string) {
	prev := f.GetNormalizeFunc()
	f.SetNormalizeFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		if to, ok := aliases[name]; ok {
			name = to
		}
		return prev(f, name)
	})
}

// durationValue is a duration flag that takes a Go duration ("10s", "1m30s",
// "200ms") or a plain number of seconds ("10", "0.5").
type durationValue struct{ d *time.Duration }

// durationFlag binds a duration flag with its default to p.
func durationFlag(f *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	f.Var(durationValue{p}, name, usage)
}

func (v durationValue) String() string {
	if v.d == nil || *v.d == 0 {
		return "0" // what pflag takes for a zero default, which the help leaves out
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d
	return nil
}

func (v durationValue) Type() string { return "duration" }

// parseDuration reads a Go duration or plain seconds.
func parseDuration(s string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(secs) || math.IsInf(secs, 0) || math.Abs(secs) > math.MaxInt64/float64(time.Second) {
			return 0, fmt.Errorf("%s seconds is out of range", s)
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("want a duration (10s, 1m30s, 200ms) or seconds (10, 0.5)")
	}
	return d, nil
}

// completeValues registers the values a flag takes for shell completion
// (wireproof completion bash|zsh|fish|powershell). Each value may carry a
// description after a tab (cobra.CompletionWithDesc).
func completeValues(cmd *cobra.Command, flag string, values ...string) {
	if err := cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)); err != nil {
		panic(fmt.Sprintf("completion of --%s on %s: %v", flag, cmd.CommandPath(), err)) // a programming error
	}
}

// flagError is the root's FlagErrorFunc: every flag parsing error is a
// usage error, and an unknown flag gets the names it was probably meant to
// be, as a mistyped verb does.
func flagError(cmd *cobra.Command, err error) error {
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		if s := suggestFlags(cmd, name); len(s) > 0 {
			err = fmt.Errorf("%w\n\nDid you mean this?\n\t--%s\n", err, strings.Join(s, "\n\t--"))
		}
	}
	return usageError{err}
}

// suggestFlags returns the visible flags of cmd whose name is within two
// edits of name or starts with it.
func suggestFlags(cmd *cobra.Command, name string) []string {
	var out []string
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if strings.HasPrefix(f.Name, name) || editDistance(f.Name, name) <= 2 {
			out = append(out, f.Name)
		}
	}
	cmd.LocalFlags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
