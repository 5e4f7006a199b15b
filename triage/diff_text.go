package triage

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wireproof/wireproof/assert"
)

// WriteJSON writes r as indented JSON, the machine-readable diff.
func (r *DiffResult) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r for a person: header differences, verdicts, the first
// divergence of the parent's story with context and a diff, and the traffic.
func (r *DiffResult) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A  %s\nB  %s\n", r.A.Path, r.B.Path)

	b.WriteString("\nheader (differences only)\n")
	if len(r.Header) == 0 {
		b.WriteString("  no differences\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  field\tA\tB\n")
		for _, f := range r.Header {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", f.Field, orDash(f.A), orDash(f.B))
		}
		tw.Flush()
	}

	b.WriteString("\nverdict\n")
	fmt.Fprintf(&b, "  A  %s\n  B  %s\n", verdictLine(r.A.Verdict), verdictLine(r.B.Verdict))
	if len(r.Suites) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  suite\tA\tB\t\t\n")
		for _, s := range r.Suites {
			mark := ""
			if !s.Same() {
				mark = "*"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", s.Suite, suiteCell(s.A, s.ACheck), suiteCell(s.B, s.BCheck), mark)
		}
		tw.Flush()
	}
	if r.VerdictDiff == "" {
		b.WriteString("  the verdicts agree (ids, seqs and times aside)\n")
	} else {
		b.WriteString("  (-A +B, ids, seqs and times blanked):\n")
		b.WriteString(indent(r.VerdictDiff, "    "))
	}

	fmt.Fprintf(&b, "\nstory of the parent thread (A: %d steps, B: %d steps)\n", len(r.A.Story), len(r.B.Story))
	writeStory(&b, r)

	b.WriteString("\ntraffic (A vs B; * marks a difference)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	writeCounts(tw, "event kind", r.Traffic.Kinds)
	writeCounts(tw, "rpc method", r.Traffic.Methods)
	tw.Flush()

	if r.Same {
		b.WriteString("\nsame story: the runs agree\n")
	} else {
		b.WriteString("\nthe runs differ\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeStory(b *strings.Builder, r *DiffResult) {
	if n := len(r.Transient); n > 0 {
		fmt.Fprintf(b, "  %d stretch(es) differ and rejoin (observation timing):", n)
		for _, h := range r.Transient {
			fmt.Fprintf(b, " A%s/B%s", stepRange(h.AIndex, h.AEnd), stepRange(h.BIndex, h.BEnd))
		}
		b.WriteString("\n")
	}
	d := r.Divergence
	if d == nil {
		fmt.Fprintf(b, "  no divergence: both stories end in the same state\n")
		return
	}
	fmt.Fprintf(b, "  the stories part at A#%d / B#%d and never rejoin\n", d.AIndex, d.BIndex)
	writeSide(b, "A", r.A.Story, d.AIndex, d.AIndex < d.AEnd, r.Context)
	writeSide(b, "B", r.B.Story, d.BIndex, d.BIndex < d.BEnd, r.Context)
	b.WriteString("  state at the divergence (-A +B):\n")
	b.WriteString(indent(d.Diff, "    "))
	fmt.Fprintf(b, "  look closer: wireproof inspect %s --around %d\n", r.A.Path, d.ASeq)
	fmt.Fprintf(b, "               wireproof inspect %s --around %d\n", r.B.Path, d.BSeq)
}

// stepRange names steps [i, j): "#3", "#3-5", or "-" for none.
func stepRange(i, j int) string {
	switch {
	case j <= i:
		return "-"
	case j == i+1:
		return fmt.Sprintf("#%d", i)
	}
	return fmt.Sprintf("#%d-%d", i, j-1)
}

// writeSide prints up to ctx steps before step i and, when the side has steps
// of its own there, up to ctx steps from i on (marked >).
func writeSide(b *strings.Builder, name string, story []StoryStep, i int, own bool, ctx int) {
	fmt.Fprintf(b, "  %s\n", name)
	from := max(0, i-ctx)
	if from > 0 {
		fmt.Fprintf(b, "      ... %d earlier step(s)\n", from)
	}
	for k := from; k < i && k < len(story); k++ {
		fmt.Fprintf(b, "      %s\n", stepLine(&story[k]))
	}
	switch {
	case own && i < len(story):
		for k := i; k < len(story) && k < i+ctx; k++ {
			fmt.Fprintf(b, "    > %s\n", stepLine(&story[k]))
		}
		if rest := len(story) - i - ctx; rest > 0 {
			fmt.Fprintf(b, "      ... %d later step(s)\n", rest)
		}
	case i >= len(story):
		b.WriteString("    > (the story ends here)\n")
	default:
		fmt.Fprintf(b, "    > (no step of its own here; next is #%d)\n", i)
	}
}

// stepLine is one step on one line.
func stepLine(s *StoryStep) string {
	seen := ""
	if s.Seen > 1 {
		seen = fmt.Sprintf(" x%d (to seq %d)", s.Seen, s.LastSeq)
	}
	return fmt.Sprintf("#%d seq %d %s%s: %s", s.Index, s.Seq, s.Source, seen, summarizeState(&s.State))
}

// summarizeState is a StoryState in one line.
func summarizeState(st *StoryState) string {
	var parts []string
	runs := make([]string, len(st.Runs))
	for i, r := range st.Runs {
		runs[i] = fmt.Sprintf("%d:%s", r.Ordinal, r.Status)
	}
	parts = append(parts, "runs["+strings.Join(runs, " ")+"]")
	subs := make([]string, len(st.Subagents))
	for i, s := range st.Subagents {
		d := s.Delivery
		if d == "" {
			d = "-"
		}
		subs[i] = fmt.Sprintf("%s:%s/%s/%s", s.Origin, s.Status, d, s.Result)
	}
	parts = append(parts, "subagents["+strings.Join(subs, " ")+"]")
	parts = append(parts, "items["+strings.Join(st.TurnItems, " ")+"]")
	roles := make([]string, len(st.Messages))
	for i, m := range st.Messages {
		roles[i] = m.Role
	}
	parts = append(parts, "messages["+strings.Join(roles, " ")+"]")
	parts = append(parts, fmt.Sprintf("pending %d", st.PendingBackgroundTasks))
	return strings.Join(parts, " ")
}

func verdictLine(v assert.Verdict) string {
	s := fmt.Sprintf("%-6s scenario %s", v.Status, orDash(string(v.Scenario)))
	if v.Failure != nil {
		s += fmt.Sprintf("  %s @%d: %s", v.Failure.Check, v.Failure.Seq, v.Failure.Message)
	}
	if v.Reason != "" {
		s += "  not applicable to " + string(v.Provider) // the reason is long: the verdicts' JSON holds it
	}
	return s + "  restart " + orDash(string(v.Restart))
}

// suiteCell is a suite's status and failing check on one side of a diff.
func suiteCell(st assert.Status, check string) string {
	switch {
	case st == "":
		return "(did not run)"
	case check != "":
		return string(st) + " " + check
	}
	return string(st)
}

func writeCounts(tw *tabwriter.Writer, title string, rows []CountRow) {
	fmt.Fprintf(tw, "  %s\tA\tB\t\t\n", title)
	for _, r := range rows {
		mark := ""
		if r.A != r.B {
			mark = "*"
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t\n", r.Name, r.A, r.B, mark)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(prefix)
		b.WriteString(l)
	}
	b.WriteString("\n")
	return b.String()
}
