package bundle

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDigester: the batched, concurrent digest equals the SHA-256 of the
// lines with their newlines, across batch boundaries and huge lines.
func TestDigester(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int // line lengths, in order
	}{
		{"nothing", nil},
		{"one short line", []int{10}},
		{"many lines over several batches", repeatInts(1000, 3*digestBatch/1000)},
		{"exactly one batch", []int{digestBatch - 1}},
		{"a huge line between short ones", []int{100, digestBatch + 5, 100}},
		{"a huge line after a batch in flight", append(repeatInts(100, digestBatch/100), 2*digestBatch, 7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDigester()
			var all bytes.Buffer
			for i, n := range tt.sizes {
				line := bytes.Repeat([]byte{byte('a' + i%26)}, n)
				d.write(line)
				all.Write(line)
				all.WriteByte('\n')
			}
			want := sha256.Sum256(all.Bytes())
			if diff := cmp.Diff(fmt.Sprintf("%x", want), fmt.Sprintf("%x", d.sum())); diff != "" {
				t.Errorf("digest (-want +got):\n%s", diff)
			}
			d.wait() // nothing in flight after sum
			if d.done != nil {
				t.Error("a batch is still in flight after sum")
			}
		})
	}
}

func repeatInts(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}
