package triage

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// The diffs Diff prints are decided by go-cmp (cmp.Equal) but written by us:
// go-cmp's text is deliberately unstable between processes, and a diff of
// the same two bundles must print the same bytes every time (as assert's
// valueDiff does for verdicts). Values are rendered one fact per line and
// the lines compared by LCS; each line is prefixed "- " (A only), "+ " (B
// only) or "  " (both).

// stateDiff is the (-A +B) diff of two states, "" when they are equal.
func stateDiff(a, b StoryState) string {
	if cmp.Equal(a, b) {
		return ""
	}
	return lineDiff(stateLines(a), stateLines(b))
}

// stateLines renders st one fact per line.
func stateLines(st StoryState) []string {
	lines := []string{"runs:"}
	for _, r := range st.Runs {
		lines = append(lines, fmt.Sprintf("  #%d %s", r.Ordinal, r.Status))
	}
	lines = append(lines, "subagents:")
	for _, s := range st.Subagents {
		lines = append(lines, fmt.Sprintf("  %s %s delivery=%s result=%s", s.Origin, s.Status, orDash(s.Delivery), s.Result))
	}
	lines = append(lines, "turn items:")
	for _, it := range st.TurnItems {
		lines = append(lines, "  "+it)
	}
	lines = append(lines, "messages:")
	for _, m := range st.Messages {
		lines = append(lines, fmt.Sprintf("  %s: %q", m.Role, m.Text))
	}
	return append(lines, fmt.Sprintf("pending background tasks: %d", st.PendingBackgroundTasks))
}

// jsonDiff is the (-A +B) diff of two values as indented JSON, "" when
// go-cmp finds them equal.
func jsonDiff(a, b any) string {
	if cmp.Equal(a, b) {
		return ""
	}
	return lineDiff(jsonLines(a), jsonLines(b))
}

func jsonLines(v any) []string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // <ID>, not \u003cID\u003e
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return []string{fmt.Sprintf("%#v", v)}
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// lineDiff writes every line of a and b, matched by a longest common
// subsequence.
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			sb.WriteString("- " + a[i] + "\n")
			i++
		default:
			sb.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return sb.String()
}
