package triage

import "testing"

// FuzzAlign checks the alignment's invariants on arbitrary stories: every
// step of each side appears exactly once and in order, matched steps have
// equal states, and hunks stay within the stories.
func FuzzAlign(f *testing.F) {
	for _, s := range [][2]string{{"abc", "abc"}, {"abcd", "ab"}, {"axcd", "aycz"}, {"", "abc"}, {"aaaa", "aa"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 200 || len(b) > 200 {
			return
		}
		sa, sb := keyed(a), keyed(b)
		ops := align(sa, sb)
		ai, bi := 0, 0
		for _, op := range ops {
			if op.a >= 0 {
				if op.a != ai {
					t.Fatalf("A step %d out of order (want %d): %v", op.a, ai, ops)
				}
				ai++
			}
			if op.b >= 0 {
				if op.b != bi {
					t.Fatalf("B step %d out of order (want %d): %v", op.b, bi, ops)
				}
				bi++
			}
			if op.a >= 0 && op.b >= 0 && sa[op.a].key != sb[op.b].key {
				t.Fatalf("matched A#%d %q with B#%d %q", op.a, sa[op.a].key, op.b, sb[op.b].key)
			}
			if op.a < 0 && op.b < 0 {
				t.Fatalf("empty op in %v", ops)
			}
		}
		if ai != len(sa) || bi != len(sb) {
			t.Fatalf("ops cover %d/%d A and %d/%d B steps", ai, len(sa), bi, len(sb))
		}
		for _, h := range hunks(ops) {
			if h.a0 > h.a1 || h.b0 > h.b1 || h.a1 > len(sa) || h.b1 > len(sb) || (h.a0 == h.a1 && h.b0 == h.b1) {
				t.Fatalf("bad hunk %+v for %q vs %q", h, a, b)
			}
		}
	})
}
