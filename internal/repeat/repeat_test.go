package repeat

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

// TestPasses checks when the check runs. A payload that fails, or one
// outside [Min, Max], is checked every time; one that passed is answered by
// the memo under its own key only. The pool may drop an entry (the GC, a
// goroutine moved to another processor, and a quarter of all Puts under
// -race), so a repeated payload may be checked again now and then, but
// not most of the time.
func TestPasses(t *testing.T) {
	big := []byte(strings.Repeat("a", Min))
	other := append(bytes.Clone(big[:Min-1]), 'b')
	small := big[:Min-1]
	huge := []byte(strings.Repeat("a", Max+1))
	const n = 200
	for _, c := range []struct {
		name string
		in   func(i int) ([]byte, string) // the payload and key of round i
		want bool
		most int // the most calls of the check in n rounds
	}{
		{"repeated", func(int) ([]byte, string) { return big, "k" }, true, n / 2},
		{"failing", func(int) ([]byte, string) { return other, "k" }, false, n},
		{"too small", func(int) ([]byte, string) { return small, "k" }, true, n},
		{"too large", func(int) ([]byte, string) { return huge, "k" }, true, n},
		{"keys in turn", func(i int) ([]byte, string) { return big, []string{"k", "j"}[i%2] }, true, n},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m Memo[string]
			calls := 0
			pass := func(b []byte) bool { calls++; return !bytes.HasSuffix(b, []byte("b")) }
			for i := range n {
				in, key := c.in(i)
				if got := m.Passes(key, in, pass); got != c.want {
					t.Fatalf("round %d: Passes = %v, want %v", i, got, c.want)
				}
			}
			if c.most < n && calls > c.most {
				t.Errorf("the check ran %d times in %d rounds, want at most %d: the memo does not answer", calls, n, c.most)
			}
			if c.most == n && calls != n {
				t.Errorf("the check ran %d times in %d rounds, want every time", calls, n)
			}
		})
	}
}

// TestPassesConcurrent checks payloads of one length that pass and fail,
// from many goroutines at once: an entry is never shared or answered for
// another payload (run with -race).
func TestPassesConcurrent(t *testing.T) {
	good := []byte(strings.Repeat("a", 20<<10))
	bad := append(bytes.Clone(good[:len(good)-1]), 'b')
	var m Memo[struct{}]
	pass := func(b []byte) bool { return b[len(b)-1] == 'a' }
	testkit.Concurrently(t, 8, 500, func(g, i int) error {
		in, want := good, true
		if (i+g)%3 == 0 {
			in, want = bad, false
		}
		if got := m.Passes(struct{}{}, in, pass); got != want {
			return fmt.Errorf("Passes = %v, want %v: answered for another payload", got, want)
		}
		return nil
	})
}
