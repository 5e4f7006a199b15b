package bundle

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wireproof/wireproof/internal/repeat"
	"github.com/wireproof/wireproof/internal/testkit"
)

// memoBody is a valid payload the memo holds: a list of threads of about
// 20 KiB, as a poll answers.
func memoBody() []byte {
	body := []byte(`{"threads":[` + strings.Repeat(`{"id":"thr_0123456789","title":"a thread","state":"idle","messages":12},`, 280))
	return append(body[:len(body)-1], "]}"...)
}

// TestValidJSONLineMemo checks that the memo answers as the scan does for a
// payload after one it found valid: the same bytes, the same bytes changed
// in one place (valid or not), shorter and longer.
func TestValidJSONLineMemo(t *testing.T) {
	body := memoBody()
	changed := func(i int, c byte) []byte {
		b := bytes.Clone(body)
		b[i] = c
		return b
	}
	tests := []struct {
		name string
		in   []byte
	}{
		{"the same bytes", bytes.Clone(body)},
		{"the last byte changed", changed(len(body)-1, ']')},
		{"the first byte changed", changed(0, '[')},
		{"a quote changed in the middle", changed(len(body)/2+bytes.IndexByte(body[len(body)/2:], '"'), 'x')},
		{"a letter changed in the middle", changed(bytes.Index(body, []byte("a thread"))+2, 'X')},
		{"a line break inside", changed(bytes.Index(body, []byte("a thread"))+1, '\n')},
		{"one byte shorter", body[:len(body)-1]},
		{"one byte longer", append(bytes.Clone(body), ' ')},
		{"one byte longer, not JSON", append(bytes.Clone(body), ',')},
		{"a byte that is no UTF-8, in a string", changed(bytes.Index(body, []byte("a thread"))+2, 0xff)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Both orders: the payload after the body, and the body
			// after the payload (a memo left by an invalid one).
			for i, in := range [][]byte{body, tc.in, body} {
				if got, want := jsonLineMemo(in), utf8.Valid(in) && validJSONLine(in); got != want {
					t.Errorf("check %d: jsonLineMemo = %v, the scan says %v", i, got, want)
				}
			}
		})
	}
}

// TestValidJSONLineMemoConcurrent checks payloads of one length, valid and
// not, from many goroutines at once, so that a memo is never shared or
// answered from another payload (run with -race).
func TestValidJSONLineMemoConcurrent(t *testing.T) {
	good := memoBody()
	bad := bytes.Clone(good)
	bad[len(bad)/2] = '}'
	if validJSONLine(bad) {
		t.Fatal("the bad payload is valid")
	}
	testkit.Concurrently(t, 8, 500, func(g, i int) error {
		in, want := good, true
		if (i+g)%3 == 0 {
			in, want = bad, false
		}
		if got := jsonLineMemo(in); got != want {
			return fmt.Errorf("a payload's check said %v, want %v: answered for another payload", got, want)
		}
		return nil
	})
}

// FuzzValidJSONLineMemo checks the memo against the scan on a payload long
// enough to be remembered, first and then changed by the fuzzer.
func FuzzValidJSONLineMemo(f *testing.F) {
	for _, s := range []string{`1`, `"x"`, `[1,2]`, `{"a":1,}`, "\"\n\"", `nul`, `]`} {
		f.Add([]byte(s), []byte(`2`))
	}
	pad := strings.Repeat("x", repeat.Min)
	f.Fuzz(func(t *testing.T, first, second []byte) {
		wrap := func(v []byte) []byte { return []byte(`{"pad":"` + pad + `","v":` + string(v) + `}`) }
		for _, in := range [][]byte{wrap(first), wrap(second), wrap(first)} {
			if got, want := jsonLineMemo(in), utf8.Valid(in) && validJSONLine(in); got != want {
				t.Fatalf("jsonLineMemo(…%q) = %v, the scan says %v", in[len(in)-min(len(in), 40):], got, want)
			}
		}
	})
}

// BenchmarkValidJSONLineMemo: the check of a 20 KiB payload repeated (a
// poll answered the same, taken from the memo) and of one that differs
// every time (scanned and copied into the memo), against the scan alone.
func BenchmarkValidJSONLineMemo(b *testing.B) {
	body := memoBody()
	// Two bodies that differ at their end, in turn: each misses the memo.
	other := bytes.Replace(bytes.Clone(body), []byte(`"messages":12}]}`), []byte(`"messages":13}]}`), 1)
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !validJSONLine(body) {
				b.Fatal("not valid")
			}
		}
	})
	b.Run("repeated", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if !jsonLineMemo(body) {
				b.Fatal("not valid")
			}
		}
	})
	b.Run("differing", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		i := 0
		for b.Loop() {
			in := body
			if i++; i&1 == 0 {
				in = other
			}
			if !jsonLineMemo(in) {
				b.Fatal("not valid")
			}
		}
	})
}
