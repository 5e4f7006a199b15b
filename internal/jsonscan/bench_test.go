package jsonscan

import (
	"strings"
	"testing"
)

// BenchmarkLongString: the bulk of recorded payloads is long strings.
func BenchmarkLongString(b *testing.B) {
	s := []byte(`"` + strings.Repeat("x", 2000) + `"`)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if end, _ := StringEnd(s, 1); end != len(s) {
			b.Fatal(end)
		}
	}
}
