package triage

import (
	"encoding/json"
	"slices"

	"github.com/wireproof/wireproof/delivery"
)

// StoryStep is one state of the parent thread's story: consecutive
// observations with the same StoryState collapse into one step.
type StoryStep struct {
	Index int    `json:"index"` // position in the story, from 0
	Seq   uint64 `json:"seq"`   // the first observation with this state
	T     int64  `json:"t"`
	// LastSeq is the last observation with this state (== Seq when seen once).
	LastSeq uint64 `json:"lastSeq"`
	// Seen counts the observations collapsed into this step.
	Seen   int        `json:"seen"`
	Source string     `json:"source"` // how the first observation arrived (delivery.Source*)
	State  StoryState `json:"state"`

	key string // State as JSON, for comparing
}

// storyBuilder collects the parent's observations of one replay into steps.
type storyBuilder struct {
	secret string
	steps  []StoryStep
}

// observe is the hook of delivery.Observed.
func (b *storyBuilder) observe(o delivery.Observation) {
	if !o.Parent || o.Projection == nil {
		return
	}
	st := NormalizeProjection(o.Projection, b.secret)
	key := stateKey(st)
	if n := len(b.steps); n > 0 && b.steps[n-1].key == key {
		b.steps[n-1].LastSeq = o.Seq
		b.steps[n-1].Seen++
		return
	}
	b.steps = append(b.steps, StoryStep{Index: len(b.steps), Seq: o.Seq, T: o.T, LastSeq: o.Seq, Seen: 1, Source: string(o.Source), State: st, key: key})
}

// stateKey is a canonical encoding of st: two states are equal exactly when
// their keys are.
func stateKey(st StoryState) string {
	b, err := json.Marshal(st)
	if err != nil {
		panic(err) // plain strings, ints and slices always marshal
	}
	return string(b)
}

// alignOp is one step of an alignment of two stories.
type alignOp struct {
	a, b int // indexes into the stories; -1 for a step the other side lacks
}

// maxAlignCells bounds the LCS table; beyond it align falls back to matching
// the common prefix and suffix only (stories are collapsed, so real ones are
// a few dozen steps).
const maxAlignCells = 4 << 20

// align matches the steps of a and b by a longest common subsequence of their
// states, so a story that diverges and later rejoins is shown rejoining. The
// common prefix is matched first, so the first unmatched step is where the
// stories part.
func align(a, b []StoryStep) []alignOp {
	var ops []alignOp
	p := 0
	for p < len(a) && p < len(b) && a[p].key == b[p].key {
		ops = append(ops, alignOp{p, p})
		p++
	}
	ra, rb := a[p:], b[p:]
	n, m := len(ra), len(rb)
	if n == 0 || m == 0 || (n+1)*(m+1) > maxAlignCells {
		for i := range ra {
			ops = append(ops, alignOp{p + i, -1})
		}
		for j := range rb {
			ops = append(ops, alignOp{-1, p + j})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of ra[i:] and rb[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case ra[i].key == rb[j].key:
				lcs[i][j] = lcs[i+1][j+1] + 1
			default:
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case ra[i].key == rb[j].key:
			ops = append(ops, alignOp{p + i, p + j})
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			ops = append(ops, alignOp{p + i, -1})
			i++
		default:
			ops = append(ops, alignOp{-1, p + j})
			j++
		}
	}
	for ; i < n; i++ {
		ops = append(ops, alignOp{p + i, -1})
	}
	for ; j < m; j++ {
		ops = append(ops, alignOp{-1, p + j})
	}
	return ops
}

// hunk is a stretch of unmatched steps: A's [a0,a1) against B's [b0,b1).
type hunk struct{ a0, a1, b0, b1 int }

// hunks groups the unmatched steps of ops into stretches between matches.
func hunks(ops []alignOp) []hunk {
	var hs []hunk
	ai, bi := 0, 0 // the next step of each side
	for k := 0; k < len(ops); {
		if ops[k].a >= 0 && ops[k].b >= 0 {
			ai, bi = ops[k].a+1, ops[k].b+1
			k++
			continue
		}
		h := hunk{a0: ai, a1: ai, b0: bi, b1: bi}
		for ; k < len(ops) && (ops[k].a < 0 || ops[k].b < 0); k++ {
			if ops[k].a >= 0 {
				h.a1 = ops[k].a + 1
			} else {
				h.b1 = ops[k].b + 1
			}
		}
		ai, bi = h.a1, h.b1
		hs = append(hs, h)
	}
	return slices.Clip(hs)
}
