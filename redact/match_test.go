package redact

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/internal/spelling"
)

// FuzzMatcherAgainstOracle: on any text, the multi-pattern matcher finds
// exactly the occurrences the per-secret automata it replaced (oracle_test.go)
// find, and holds back at least as much of a text's end.
func FuzzMatcherAgainstOracle(f *testing.F) {
	f.Add("a b", "x=%61%20b&y=\\u0061 b", "s3cret", uint8(0))
	f.Add("päss+wörd", `{"v":"p\u00e4ss+w%C3%B6rd"}`, "päss", uint8(3))
	f.Add("😀x-1", `"\ud83d\ude00x-1" \ud83d`, "-1x", uint8(5))
	f.Add("ab", "%6", "ba", uint8(1))
	f.Add("Zq-7&x/ y", "token=abc Zq-7%26x%2F+y \\u005a", "yy", uint8(7))
	f.Fuzz(func(t *testing.T, s1, text, s2 string, how uint8) {
		var secrets []string
		for _, s := range []string{s1, s2} {
			if s != "" && utf8.ValidString(s) && len(s) <= 8 { // the oracle is exponential in the length of a secret of backslashes
				secrets = append(secrets, s)
			}
		}
		if len(secrets) == 0 || len(text) > 1024 {
			return
		}
		// Put a spelling of the first secret in the text.
		names := spelling.Names[:len(spelling.Names)-1]
		sp := spelling.Spell(secrets[0], names[int(how)%len(names)])
		if k := int(how) % (len(text) + 1); utf8.ValidString(text) {
			text = text[:k] + sp + text[k:]
		}
		b := []byte(text)
		wantSpans, wantPartial := newOracleSet(secrets).find(b)
		gotSpans, gotPartial := newMatcher(secrets, nil).find(b)
		if diff := cmp.Diff(spanStrings(b, wantSpans), spanStrings(b, gotSpans)); diff != "" {
			t.Fatalf("secrets %q in %q: occurrences (-oracle +matcher):\n%s", secrets, text, diff)
		}
		if gotPartial > wantPartial {
			t.Fatalf("secrets %q in %q: the matcher holds back from %d, the oracle from %d", secrets, text, gotPartial, wantPartial)
		}
	})
}

func spanStrings(b []byte, spans []span) []string {
	var out []string
	for _, sp := range spans {
		out = append(out, fmt.Sprintf("%d-%d %q", sp.start, sp.end, b[sp.start:sp.end]))
	}
	return out
}

// TestMatcherManySecrets: with 2,000 secrets, each is found in every
// spelling, and text holding none of them is left alone.
func TestMatcherManySecrets(t *testing.T) {
	secrets := manySecrets(2000)
	r := New(secrets, nil)
	set := r.Snapshot()
	for _, i := range []int{0, 1, 999, 1999} {
		for _, how := range testSpellings {
			in := `{"v":"a ` + spell(secrets[i], how) + ` b"}`
			if got, want := string(r.Bytes([]byte(in), set)), `{"v":"a [REDACTED] b"}`; got != want {
				t.Errorf("secret %d in %s: %q, want %q", i, how, got, want)
			}
		}
	}
	clean := []byte(strings.Repeat(`{"type":"thread.message.delta","delta":"lorem ipsum dolor"} `, 50))
	if got := r.Bytes(clean, set); &got[0] != &clean[0] {
		t.Error("a text holding no secret was copied")
	}
}

// manySecrets returns n distinct secrets shaped like API keys.
func manySecrets(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("sk-%04d-%x", i, uint64(i)*0x9e3779b97f4a7c15)
	}
	return out
}
