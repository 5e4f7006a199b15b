package redact

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/internal/spelling"
)

// TestMatcherMatchesOracle compares the matcher with the per-secret automata
// on 50,000 random texts built of spellings of a secret and of the
// characters whose spellings are ambiguous (%, \, +, space, u and hex
// digits), pieces that the fuzz target rarely puts together by chance.
func TestMatcherMatchesOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := []string{"a", "b", "0", "u", "%", `\`, " ", "+", "ü", "/", "\"", "n", "2"}
	names := spelling.Names[:len(spelling.Names)-1]
	for it := 0; it < 50000; it++ {
		var sb strings.Builder
		for range 1 + rng.IntN(5) {
			sb.WriteString(alpha[rng.IntN(len(alpha))])
		}
		sec := sb.String()
		var tb strings.Builder
		for range rng.IntN(6) {
			if rng.IntN(3) == 0 {
				tb.WriteString(spelling.Spell(sec, names[rng.IntN(len(names))]))
			} else {
				a := alpha[rng.IntN(len(alpha))]
				tb.WriteString(spelling.Spell(a, names[rng.IntN(len(names))]))
			}
		}
		text := tb.String()
		b := []byte(text)
		ws, wp := newOracleSet([]string{sec}).find(b)
		gs, gp := newMatcher([]string{sec}, nil).find(b)
		if diff := cmp.Diff(spanStrings(b, ws), spanStrings(b, gs)); diff != "" || gp > wp {
			t.Fatalf("secret %q text %q: (-oracle +matcher)\n%s\npartial oracle %d matcher %d", sec, text, diff, wp, gp)
		}
	}
}
