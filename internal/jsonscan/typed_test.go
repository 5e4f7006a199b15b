package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSkipStringEveryOffset puts each kind of byte that matters to the
// string scanner at every offset of strings around the eight-byte stride,
// and compares with a byte-at-a-time reading of the same string.
func TestSkipStringEveryOffset(t *testing.T) {
	specials := []struct {
		name  string
		bytes string
	}{
		{"quote", `"`}, {"escape", `\n`}, {"unicode escape", `\u00e9`}, {"bad escape", `\x`},
		{"control", "\x01"}, {"tab", "\t"}, {"non-ASCII", "é"}, {"high byte", "\xff"}, {"DEL", "\x7f"}, {"space", " "},
	}
	for _, sp := range specials {
		for n := 0; n < 20; n++ {
			for at := 0; at <= n; at++ {
				body := strings.Repeat("a", at) + sp.bytes + strings.Repeat("b", n-at)
				input := `"` + body + `"`
				s := NewScanner([]byte(input))
				_, contents, escaped, ok := s.String()
				plain := ok && !escaped && isASCII(string(contents))
				var want string
				wantOK := json.Unmarshal([]byte(input), &want) == nil
				wantPlain := wantOK && want == body && !strings.ContainsAny(body, "\\") && isASCII(body)
				if sp.name == "quote" {
					// The string ends at the inner quote; what follows is not ours.
					wantOK, wantPlain = true, true
				}
				if ok != wantOK || ok && plain != wantPlain {
					t.Errorf("%s at %d of %q: ok=%v plain=%v, want ok=%v plain=%v", sp.name, at, input, ok, plain, wantOK, wantPlain)
				}
				if sp.name == "quote" && s.Pos() != at+2 {
					t.Errorf("quote at %d of %q: ended at %d, want %d", at, input, s.Pos(), at+2)
				}
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
