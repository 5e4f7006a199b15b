// Package textdiff writes deterministic diffs of lines: the same two inputs
// give the same bytes in every process, which go-cmp's text deliberately
// does not. Verdicts carry these diffs, and a verdict must be byte-identical
// live and in every replay.
package textdiff

// Op is one line of a diff: Kind is '-' (only in the first input), '+'
// (only in the second) or ' ' (in both).
type Op struct {
	Kind byte
	Line string
}

// Lines matches the lines of a and b by a longest common subsequence and
// returns every line of both in order, each marked. Where either order
// would do, a line of b comes before a line of a.
func Lines(a, b []string) []Op {
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
	ops := make([]Op, 0, max(n, m))
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, Op{' ', a[i]})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, Op{'+', b[j]})
			j++
		default:
			ops = append(ops, Op{'-', a[i]})
			i++
		}
	}
	return ops
}
