package rare

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIndex: a Word is found where bytes.Index finds it: at either end,
// after near misses that share its rarest letter, and not where only a part
// of it fits.
func TestIndex(t *testing.T) {
	var got, want []int
	for _, w := range []string{"elta", "content_block_start", "thread.message-sent", "sk-ant-", "a", "q", "._-", "kk"} {
		m := New(w)
		for _, b := range []string{
			"", w[:len(w)-1], w, "x" + w, w + "x", strings.Repeat(w[:len(w)-1]+"#", 3) + w,
			w[1:] + w[:len(w)-1], strings.Repeat(string(w[m.a]), 40) + w[:len(w)-1],
			w[:m.a+1] + w[m.a:], "k" + w + w, `{"type":"content_block_delta","delta":{"text":"hi"}}`,
		} {
			got = append(got, m.Index([]byte(b)))
			want = append(want, strings.Index(b, w))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("indexes (-bytes.Index +Word.Index):\n%s", diff)
	}
	for _, tc := range []struct {
		w    string
		want byte
	}{{"elta", 'l'}, {"content_block_start", 'k'}, {"thread.message-sent", 'g'}, {"complete", 'p'}, {"._-", '.'}} {
		if m := New(tc.w); m.w[m.a] != tc.want {
			t.Errorf("New(%q) searches for %q, want %q", tc.w, m.w[m.a], tc.want)
		}
	}
	if Any([]byte("a delta"), []Word{New("start"), New("elta")}) != true || Any([]byte("a delt"), []Word{New("elta")}) {
		t.Error("Any disagrees with In")
	}
}

// FuzzIndex holds Word.Index to bytes.Index.
func FuzzIndex(f *testing.F) {
	f.Add([]byte(`{"type":"content_block_delta"}`), "elta")
	f.Add([]byte("thread.message-sen thread.message-sent"), "thread.message-sent")
	f.Add([]byte("gg"), "g")
	f.Fuzz(func(t *testing.T, b []byte, w string) {
		if got, want := New(w).Index(b), bytes.Index(b, []byte(w)); got != want {
			t.Fatalf("New(%q).Index(%q) = %d, bytes.Index says %d", w, b, got, want)
		}
	})
}

// bench is the bench's 64 MiB JSON message in small (1 MiB).
var bench = []byte(`{"threads":[` + strings.Repeat(`{"id":"thr_0123456789","title":"a background task","state":"running","messages":12},`, (1<<20)/84) + `{}]}`)

// BenchmarkIndex compares a Word with bytes.Index on text that holds
// neither word.
func BenchmarkIndex(b *testing.B) {
	for _, w := range []string{"elta", "thread.message-sent"} {
		b.Run(w+"/bytes.Index", func(b *testing.B) {
			b.SetBytes(int64(len(bench)))
			for b.Loop() {
				if bytes.Index(bench, []byte(w)) >= 0 {
					b.Fatal("found")
				}
			}
		})
		m := New(w)
		b.Run(w+"/Word", func(b *testing.B) {
			b.SetBytes(int64(len(bench)))
			for b.Loop() {
				if m.Index(bench) >= 0 {
					b.Fatal("found")
				}
			}
		})
	}
}

func ExampleWord_Index() {
	w := New("elta") // searched for from its 'l'
	fmt.Println(w.Index([]byte(`{"type":"content_block_delta"}`)))
	// Output: 24
}
