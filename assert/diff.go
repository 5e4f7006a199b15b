package assert

import (
	"fmt"
	"strings"
)

// valueDiff renders a (-want +got) diff of two compared values. go-cmp decides
// equality, but its text is deliberately unstable between processes, and a
// verdict must serialize to the same bytes live and offline; so the text is
// ours: one line per differing value, slices element by element (LCS).
func valueDiff(want, got any) string {
	ws, wok := want.([]string)
	gs, gok := got.([]string)
	if !wok || !gok {
		return fmt.Sprintf("-\t%#v\n+\t%#v\n", want, got)
	}
	var b strings.Builder
	// Longest common subsequence table, for small slices.
	n, m := len(ws), len(gs)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if ws[i] == gs[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && ws[i] == gs[j]:
			fmt.Fprintf(&b, " \t%q\n", ws[i])
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			fmt.Fprintf(&b, "+\t%q\n", gs[j])
			j++
		default:
			fmt.Fprintf(&b, "-\t%q\n", ws[i])
			i++
		}
	}
	return b.String()
}
