package bundle

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
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

// TestReaderDigestMismatch: a format 1 bundle of several digest batches reads clean,
// and the same bundle with one byte of content changed (same length) fails
// the trailer's digest check.
func TestReaderDigestMismatch(t *testing.T) {
	var events []Event
	for i := 0; i < 40; i++ {
		events = append(events, Event{Kind: KindProcLog, Conn: "server", Type: TypeStdout, Body: Text(bytes.Repeat([]byte("x"), 100<<10))})
	}
	raw := legacy(t, writeBundle(t, events, true))
	read := func(b []byte) error {
		r, err := NewReader(bytes.NewReader(b), nil)
		if err != nil {
			return err
		}
		defer r.Close()
		var ev Event
		for {
			if err := r.Next(&ev); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}
	if err := read(raw); err != nil {
		t.Fatalf("intact bundle: %v", err)
	}
	plain, err := zstdDecodeAll(raw)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(plain, []byte("xxxx")) // inside the last log line, before the trailer
	plain[i] = 'y'
	err = read(zstdEncodeAll(t, plain))
	var de *DamagedError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "digest") {
		t.Fatalf("tampered bundle: err = %v, want a digest mismatch", err)
	}
}

func zstdDecodeAll(b []byte) ([]byte, error) {
	d, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.DecodeAll(b, nil)
}

func zstdEncodeAll(t *testing.T, b []byte) []byte {
	e, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll(b, nil)
}
