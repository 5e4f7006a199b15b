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

// BenchmarkDeltas streams a model's answer as 32-byte text deltas (server-sent
// events) through a Deltas with 1, 100 and 2,000 secrets: the cost per event
// does not grow with their number.
func BenchmarkDeltas(b *testing.B) {
	text := strings.Repeat("lorem ipsum dolor sit amet, \u00e9 50% + more. ", 200)
	msgs := anthropicStream(text, `{"command":"ls -la /tmp","timeout":600000}`, 32, sseWrap)
	size := 0
	for _, m := range msgs {
		size += len(m)
	}
	for _, n := range []int{1, 100, 2000} {
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) {
			red := New(manySecrets(n), nil)
			b.SetBytes(int64(size))
			for b.Loop() {
				d := NewDeltas(red)
				for _, m := range msgs {
					d.Next([]byte(m))
				}
				d.Flush(true)
			}
		})
	}
}
