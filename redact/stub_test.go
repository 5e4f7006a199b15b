package redact

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRedactStubs: a text cut short inside a secret (a snapshot of a
// streamed answer taken between two of its pieces) has the secret's start
// redacted where a quote or the text's end cuts it, in any spelling; a
// start too short to be one, one the text goes on from, and an object's key
// are left as they are.
func TestRedactStubs(t *testing.T) {
	const sec = "sk-wp-SECRETVALUE123456" // 23 bytes: its stubs are its first 8 to 22
	for _, c := range []struct {
		name, in, want string
	}{
		{"snapshot of a message", `{"text":"ACK:sk-wp-SECR","streaming":true}`, `{"text":"ACK:[REDACTED]","streaming":true}`},
		{"all but the last character", `{"text":"ACK:sk-wp-SECRETVALUE12345"}`, `{"text":"ACK:[REDACTED]"}`},
		{"the fewest characters", `{"text":"sk-wp-SE"}`, `{"text":"[REDACTED]"}`},
		{"one too few", `{"text":"sk-wp-S"}`, `{"text":"sk-wp-S"}`},
		{"JSON escapes", `{"text":"sk\u002dwp\u002dSECRET"}`, `{"text":"[REDACTED]"}`},
		{"percent-encoded", `{"q":"sk%2Dwp%2DSECRET"}`, `{"q":"[REDACTED]"}`},
		{"quoted in a quoted text", `{"line":"{\"text\":\"ACK:sk-wp-SECRETV\"}"}`, `{"line":"{\"text\":\"ACK:[REDACTED]\"}"}`},
		{"quoted in prose", `said "sk-wp-SECRET" twice`, `said "[REDACTED]" twice`},
		{"at the end of a text", `assistant so far: ACK:sk-wp-SECRETVAL`, `assistant so far: ACK:[REDACTED]`},
		{"the text goes on", `{"text":"sk-wp-SECRETS are kept elsewhere"}`, `{"text":"sk-wp-SECRETS are kept elsewhere"}`},
		{"a key", `{"sk-wp-SECRET": 1, "b" : "x"}`, `{"sk-wp-SECRET": 1, "b" : "x"}`},
		{"a value after a key", `{"sk-wp-SECRET" :"sk-wp-SECRET"}`, `{"sk-wp-SECRET" :"[REDACTED]"}`},
		{"the whole secret", `{"text":"ACK:sk-wp-SECRETVALUE123456"}`, `{"text":"ACK:[REDACTED]"}`},
		{"snapshots in a row", `[{"text":"sk-wp-SECRE"},{"text":"sk-wp-SECRETVALUE1"},{"text":"sk-wp-SECRETVALUE123456 ok"}]`,
			`[{"text":"[REDACTED]"},{"text":"[REDACTED]"},{"text":"[REDACTED] ok"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := New([]string{sec}, nil)
			got := string(r.Bytes([]byte(c.in), r.Snapshot()))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Bytes(%s) (-want +got):\n%s", c.in, diff)
			}
			if json.Valid([]byte(c.in)) && !json.Valid([]byte(got)) {
				t.Errorf("redaction broke JSON: %s", got)
			}
		})
	}
}

// TestStubMin: how much of a secret makes a stub.
func TestStubMin(t *testing.T) {
	got := map[int]int{}
	for _, n := range []int{3, 6, 11, 12, 13, 15, 16, 40} {
		got[n] = stubMin(n)
	}
	want := map[int]int{3: 3, 6: 6, 11: 11, 12: 6, 13: 7, 15: 8, 16: 8, 40: 8}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stubMin (-want +got):\n%s", diff)
	}
	// A secret shorter than 12 bytes has no stub: its start is never
	// redacted alone.
	r := New([]string{"abcdefghijk"}, nil)
	if got := string(r.Bytes([]byte(`{"t":"abcdefghij"}`), r.Snapshot())); got != `{"t":"abcdefghij"}` {
		t.Errorf("the start of an 11-byte secret was redacted: %s", got)
	}
	r = New([]string{"abcdefghijkl"}, nil)
	if got := string(r.Bytes([]byte(`{"t":"abcdef","u":"abcde"}`), r.Snapshot())); got != `{"t":"[REDACTED]","u":"abcde"}` {
		t.Errorf("the stubs of a 12-byte secret: %s", got)
	}
}

// TestRedactStubsInAStream: a stub whose closing quote comes in the next
// chunk of a stream is redacted all the same, and a stream's piece never
// has a stub redacted at its end when the stream goes on with the secret.
func TestRedactStubsInAStream(t *testing.T) {
	const sec = "sk-wp-SECRETVALUE123456"
	for _, c := range []struct {
		name   string
		chunks []string
		want   string
	}{
		{"quote in the next chunk", []string{`data: {"text":"ACK:sk-wp-SECR`, `ET"}` + "\n\n"}, `data: {"text":"ACK:[REDACTED]"}` + "\n\n"},
		{"secret completed in the next chunk", []string{`data: {"text":"ACK:sk-wp-SECRETVAL`, `UE123456 done"}` + "\n\n"}, `data: {"text":"ACK:[REDACTED] done"}` + "\n\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			red := New([]string{sec}, nil)
			s := NewStream(red)
			var got []byte
			for _, ch := range c.chunks {
				got = append(got, red.Bytes(s.Next([]byte(ch)), red.Snapshot())...)
			}
			got = append(got, red.Bytes(s.Flush(true), red.Snapshot())...)
			if diff := cmp.Diff(c.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestStubsMatchNaive compares the stubs the matcher redacts with a naive
// search on random raw texts: each quote that closes no key, and the text's
// end, cut off the longest start of a secret that ends there, if it is a
// stub.
func TestStubsMatchNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alpha := []string{"a", "b", "c", `"`, ":", " ", "ab", "abc", "abcab"}
	for it := 0; it < 20000; it++ {
		var sb strings.Builder
		for range 2 + rng.IntN(16) {
			sb.WriteByte("abc"[rng.IntN(3)])
		}
		sec := sb.String()
		var tb strings.Builder
		for range rng.IntN(10) {
			if rng.IntN(3) == 0 {
				tb.WriteString(sec[:1+rng.IntN(len(sec))])
			} else {
				tb.WriteString(alpha[rng.IntN(len(alpha))])
			}
		}
		b := []byte(tb.String())
		got, _ := newMatcher([]string{sec}, nil).search(b, stubQuoted|stubAtEnd)
		want := naiveStubs(sec, b)
		if diff := cmp.Diff(spanStrings(b, want), spanStrings(b, got)); diff != "" {
			t.Fatalf("secret %q text %q: (-naive +matcher)\n%s", sec, b, diff)
		}
	}
}

// naiveStubs is what search(b, stubQuoted|stubAtEnd) finds in a raw text b
// (no escapes, no percent): every occurrence of sec, and every stub, merged.
func naiveStubs(sec string, b []byte) []span {
	var spans []span
	for i := 0; i+len(sec) <= len(b); i++ {
		if string(b[i:i+len(sec)]) == sec {
			spans = append(spans, span{i, i + len(sec)})
		}
	}
	cutAt := func(e int) {
		for l := len(sec) - 1; l >= stubMin(len(sec)); l-- {
			if e >= l && string(b[e-l:e]) == sec[:l] {
				spans = append(spans, span{e - l, e})
				return
			}
		}
	}
	for e := range b {
		if b[e] == '"' && !keyFollows(b, e+1) {
			cutAt(e)
		}
	}
	cutAt(len(b))
	return mergeSpans(b, spans)
}

// FuzzRedactStubSnapshot: whatever text comes before it and however it is
// spelled, a stub that ends a JSON string value is redacted, and the JSON
// stays valid.
func FuzzRedactStubSnapshot(f *testing.F) {
	f.Add("ACK:", uint8(0), uint8(0))
	f.Add(`say "`, uint8(7), uint8(3))
	f.Add(`\`, uint8(200), uint8(5))
	f.Add("sk-wp-", uint8(3), uint8(8))
	const secret = "sk-wp-SECRETVALUE123456"
	lo := stubMin(len(secret))
	f.Fuzz(func(t *testing.T, pre string, k, how uint8) {
		if strings.Contains(pre, secret[:lo]) {
			return // pre holds a stub of its own, not at the end
		}
		stub := secret[:lo+int(k)%(len(secret)-lo)]
		q, _ := json.Marshal(pre)
		in := `{"text":` + string(q[:len(q)-1]) + spell(stub, testSpellings[int(how)%len(testSpellings)]) + `","n":1}`
		if !json.Valid([]byte(in)) {
			return // a spelling that is not JSON (form's +)
		}
		r := New([]string{secret}, nil)
		got := r.Bytes([]byte(in), r.Snapshot())
		var v struct{ Text string }
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatalf("redaction broke JSON: %s -> %s: %v", in, got, err)
		}
		if strings.Contains(v.Text, stub) || !strings.HasSuffix(v.Text, Redacted) {
			t.Fatalf("the stub survived: %s -> %s", in, got)
		}
	})
}
