package credscan

import (
	"bytes"
	"testing"
)

// FuzzFind: findings are in order, inside the text, never overlapping, never
// a placeholder; a masked excerpt never holds a finding whole; Redact leaves
// nothing to find where it replaced.
func FuzzFind(f *testing.F) {
	for _, s := range []string{"OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789", "Bearer abc123def456ghi", `{"token":"[REDACTED]"}`,
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "AKIAIOSFODNN7EXAMPLE", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		fs := Find(text)
		at := 0
		for _, g := range fs {
			if g.Start < at || g.End <= g.Start || g.End > len(text) {
				t.Fatalf("finding %+v out of order or bounds (after %d, len %d)", g, at, len(text))
			}
			at = g.End
			v := text[g.Start:g.End]
			if bytes.Contains(v, []byte("REDACTED")) {
				t.Fatalf("a placeholder counted: %q", v)
			}
			if ex := Excerpt(text, fs, g, 20); len(v) >= 8 && bytes.Contains([]byte(ex), v) {
				t.Fatalf("excerpt %q holds the finding %q whole", ex, v)
			}
		}
		red := Redact(text)
		if len(fs) > 0 && bytes.Equal(red, text) {
			t.Fatalf("Redact changed nothing of %q", text)
		}
	})
}
