package redact

import (
	"strings"
	"testing"
)

// BenchmarkFieldHint measures the token-field scan of a payload with no
// token field but an anchor letter every 40 bytes or so ("task",
// "background"), the bench's 64 MiB message in small.
func BenchmarkFieldHint(b *testing.B) {
	item := `{"id":"thr_0123456789","title":"a background task","state":"running","messages":12},`
	body := []byte(`{"threads":[` + strings.Repeat(item, (1<<20)/len(item)) + `{}]}`)
	fs := newFieldSet(nil)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if fs.hint(body) {
			b.Fatal("a token field found")
		}
	}
}
