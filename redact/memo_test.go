package redact

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/repeat"
	"github.com/wireproof/wireproof/internal/testkit"
)

// memoText is a text the memo holds: a 20 KiB list of threads, as a poll
// answers.
func memoText() []byte {
	return []byte(`{"threads":[` + strings.Repeat(`{"id":"thr_0123456789","title":"a thread","state":"idle","messages":12},`, 280) + `{}]}`)
}

// TestFindTextMemo checks that the memo answers as the search does: for the
// text it holds, for the same text with a secret written into it (same
// length), and for the same text under a set that learned a secret it
// holds.
func TestFindTextMemo(t *testing.T) {
	body := memoText()
	const secret = "sk-wp-MEMOSECRET1234"
	withSecret := bytes.Clone(body)
	at := bytes.Index(withSecret, []byte("a thread"))
	withSecret = append(withSecret[:at:at], append([]byte(secret), withSecret[at+len(secret):]...)...)
	if len(withSecret) != len(body) {
		t.Fatal("the text with the secret has another length")
	}
	r := New([]string{secret}, nil)
	set := r.Snapshot()
	for i, in := range [][]byte{body, body, withSecret, body, withSecret} {
		if got, want := set.findTextMemo(in), set.findText(in); len(got) != len(want) {
			t.Errorf("text %d: the memo found %d, the search %d", i, len(got), len(want))
		}
	}
	// A secret learned that the remembered text holds: the new set
	// searches again.
	r.Add("thr_0123456789")
	if got := r.Snapshot().findTextMemo(body); len(got) != 280 {
		t.Errorf("after learning a secret the text holds 280 times: %d found", len(got))
	}
	if got := set.findTextMemo(body); len(got) != 0 {
		t.Errorf("the old set: %d found, want 0", len(got))
	}
}

// TestRedactEventMemo: a body recorded again after a secret was learned is
// redacted, whatever the memo held of it.
func TestRedactEventMemo(t *testing.T) {
	body := memoText()
	r := New([]string{"sk-wp-UNRELATED-123456"}, nil)
	for range 2 {
		ev := &bundle.Event{Kind: bundle.KindHTTPBody, Body: bundle.Payload{Data: body}}
		r.Event(ev, r.Snapshot())
		if !bytes.Equal(ev.Body.Data, body) {
			t.Fatal("a body without secrets was changed")
		}
	}
	r.Add("0123456789")
	ev := &bundle.Event{Kind: bundle.KindHTTPBody, Body: bundle.Payload{Data: body}}
	r.Event(ev, r.Snapshot())
	if bytes.Contains(ev.Body.Data, []byte("0123456789")) {
		t.Error("the secret learned after the memo took the body reached the event")
	}
}

// TestFindTextMemoConcurrent searches texts of one length, with the secret
// and without, from many goroutines at once, so a memo is never shared or
// answered for another text (run with -race).
func TestFindTextMemoConcurrent(t *testing.T) {
	const secret = "sk-wp-CONCURRENT1234"
	clean := memoText()
	dirty := bytes.Clone(clean)
	copy(dirty[len(dirty)/2:], secret)
	set := New([]string{secret}, nil).Snapshot()
	testkit.Concurrently(t, 8, 300, func(g, i int) error {
		in, want := clean, 0
		if (i+g)%3 == 0 {
			in, want = dirty, 1
		}
		if got := len(set.findTextMemo(in)); got != want {
			return fmt.Errorf("a text's search found %d, want %d: answered for another text", got, want)
		}
		return nil
	})
}

// FuzzFindTextMemo checks the memo against the search on texts long enough
// to be remembered: one, then another, then the first again.
func FuzzFindTextMemo(f *testing.F) {
	f.Add([]byte("nothing here"), []byte("sk-wp-FUZZSECRET99"), "sk-wp-FUZZSECRET99")
	f.Add([]byte(`{"a":"sk-wp-FUZZ`), []byte(`SECRET99"}`), "sk-wp-FUZZSECRET99")
	pad := strings.Repeat("x", repeat.Min)
	f.Fuzz(func(t *testing.T, first, second []byte, secret string) {
		if len(secret) < 12 {
			return
		}
		set := New([]string{secret}, nil).Snapshot()
		for i, in := range [][]byte{append([]byte(pad), first...), append([]byte(pad), second...), append([]byte(pad), first...)} {
			got, want := set.findTextMemo(in), set.findText(in)
			if len(got) != len(want) {
				t.Fatalf("text %d: the memo found %d, the search %d", i, len(got), len(want))
			}
			for j := range got {
				if got[j] != want[j] {
					t.Fatalf("text %d: span %d is %v, the search's %v", i, j, got[j], want[j])
				}
			}
		}
	})
}

// BenchmarkFindTextMemo: the search of a 20 KiB text repeated (answered by
// the memo) against the search alone. What a text that differs costs is
// bundle's BenchmarkValidJSONLineMemo's "differing" (internal/repeat).
func BenchmarkFindTextMemo(b *testing.B) {
	set := New([]string{"sk-wp-BENCHSECRET123"}, nil).Snapshot()
	benchMemo(b, func(t []byte) { set.findText(t) }, func(t []byte) { set.findTextMemo(t) })
}

// benchMemo runs a check of the 20 KiB memoText alone (search) and from its
// memo, the text repeated (repeated).
func benchMemo(b *testing.B, search, memo func([]byte)) {
	body := memoText()
	for _, c := range []struct {
		name string
		f    func([]byte)
	}{{"search", search}, {"repeated", memo}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				c.f(body)
			}
		})
	}
}

// TestHintMemo checks that the memo of texts without a token field name
// answers as the search does, in a sequence that repeats a name-free text,
// then gives one of the same length with a name in it: the name is found
// every time, and its value redacted.
func TestHintMemo(t *testing.T) {
	clean := memoText()
	named := bytes.Clone(clean)
	at := bytes.Index(named, []byte(`"title":"a thread"`))
	copy(named[at:], `"token":"tok-0123"`)
	if len(named) != len(clean) {
		t.Fatal("the text with the name has another length")
	}
	r := New(nil, nil)
	for i, in := range [][]byte{clean, clean, named, clean, named, named} {
		if got, want := r.fields.hintMemo(in), r.fields.hint(in); got != want {
			t.Errorf("text %d: the memo says %v, the search %v", i, got, want)
		}
	}
	// Through Event: the name-free body is remembered, then the body that
	// names a token is redacted.
	r = New(nil, nil)
	for _, in := range [][]byte{clean, clean, named} {
		ev := &bundle.Event{Kind: bundle.KindHTTPBody, Body: bundle.Payload{Data: bytes.Clone(in)}}
		r.Event(ev, r.Snapshot())
		if bytes.Contains(ev.Body.Data, []byte("tok-0123")) {
			t.Fatal("the token of a body that repeats a name-free one's length reached the event")
		}
	}
}

// FuzzHintMemo checks the memo of name-free texts against the search: one
// text, then another, then the first again.
func FuzzHintMemo(f *testing.F) {
	f.Add([]byte("nothing here"), []byte(`{"access_token":"x"}`))
	f.Add([]byte(`{"password":"y"}`), []byte(`{"passw`))
	pad := strings.Repeat("x", repeat.Min)
	fs := New(nil, nil).fields
	f.Fuzz(func(t *testing.T, first, second []byte) {
		for i, in := range [][]byte{append([]byte(pad), first...), append([]byte(pad), second...), append([]byte(pad), first...)} {
			if got, want := fs.hintMemo(in), fs.hint(in); got != want {
				t.Fatalf("text %d: the memo says %v, the search %v", i, got, want)
			}
		}
	})
}

// BenchmarkHintMemo: the search of a 20 KiB text for token field names,
// repeated (answered by the memo), against the search alone.
func BenchmarkHintMemo(b *testing.B) {
	fs := New(nil, nil).fields
	benchMemo(b, func(t []byte) { fs.hint(t) }, func(t []byte) { fs.hintMemo(t) })
}
