package redact

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkFind compares the matcher against the per-secret automata it
// replaced (the oracle of the tests), with 1, 100 and 2,000 secrets;
// bench's BenchmarkRedactSecrets measures a whole request.
func BenchmarkFind(b *testing.B) {
	for _, n := range []int{1, 100, 2000} {
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) {
			var all []string
			var b64 []bool
			r := New(nil, nil)
			for _, s := range manySecrets(n) {
				all, b64 = r.spellings(all, b64, s, false)
			}
			body := []byte(strings.Repeat(`{"delta":"lorem ipsum \u00e9 50% + more","path":"C:\\x"},`, 400))
			b.SetBytes(int64(len(body)))
			for name, find := range map[string]func([]byte) ([]span, int){"oracle": newOracleSet(all).find, "matcher": newMatcher(all, b64).find} {
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						find(body)
					}
				})
			}
		})
	}
}
