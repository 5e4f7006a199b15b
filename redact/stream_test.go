package redact

import (
	"encoding/base64"
	"github.com/wireproof/wireproof/internal/spelling"
	"strings"
	"testing"
)

func spell(s, how string) string { return spelling.Spell(s, how) }

// testSpellings are the wire spellings the redactor must see through (HTML
// escaping is how a report shows text, not a wire spelling).
var testSpellings = spelling.Names[:len(spelling.Names)-1]

func TestRedactSpellings(t *testing.T) {
	secrets := []string{"s3cr3t-Tok/en&<x> +y", "päss wörd-ü"}
	for _, sec := range secrets {
		for _, how := range testSpellings {
			t.Run(how+"/"+sec, func(t *testing.T) {
				sp := spell(sec, how)
				in := `{"v":"a ` + sp + ` b","n":1}`
				got := Text(in, &Options{Secrets: []string{sec}})
				if want := `{"v":"a [REDACTED] b","n":1}`; got != want {
					t.Errorf("Text(%q) = %q, want %q", in, got, want)
				}
			})
		}
	}
}

func TestRedactBase64(t *testing.T) {
	sec := "hunter2-password"
	for _, pre := range []string{"", "u:", "us:", "user:"} {
		enc := base64Std(pre + sec + "!")
		got := Text("Basic "+enc+" tail", &Options{Secrets: []string{sec}})
		if strings.Contains(got, enc[len(enc)/2-2:len(enc)/2+2]) {
			t.Errorf("base64 of %q survived: %q", pre+sec, got)
		}
	}
	// A Basic header teaches the password to the redactor.
	r := New(nil, nil)
	for _, s := range credentialValues("Authorization", "Basic "+base64Std("alice:correct-horse")) {
		r.add(s, true)
	}
	if got := string(r.Bytes([]byte("echo correct-horse"), r.Snapshot())); got != "echo [REDACTED]" {
		t.Errorf("the Basic password was not learned: %q", got)
	}
}

// TestStreamSplitAnywhere feeds text holding secrets and token fields in
// every spelling through a stream split at every position, redacts each piece
// on its own, and checks no secret survives and nothing else is lost.
func TestStreamSplitAnywhere(t *testing.T) {
	sec := "Zq-7&x/ y"
	for _, how := range testSpellings {
		text := `data: {"a":"` + spell(sec, how) + `"}` + "\n" + `{"token":"learned-val-123"} token=abcdefgh1&x=1 learned-val-123 end`
		for cut := 0; cut <= len(text); cut++ {
			red := New([]string{sec}, nil)
			s := NewStream(red)
			var out strings.Builder
			for _, chunk := range []string{text[:cut], text[cut:]} {
				piece := s.Next([]byte(chunk))
				red.learn(piece)
				out.Write(red.Bytes(piece, red.Snapshot()))
			}
			tail := s.Flush(true)
			red.learn(tail)
			out.Write(red.Bytes(tail, red.Snapshot()))
			got := out.String()
			want := `data: {"a":"[REDACTED]"}` + "\n" + `{"token":"[REDACTED]"} token=[REDACTED]&x=1 [REDACTED] end`
			if got != want {
				t.Fatalf("%s split at %d:\n got %q\nwant %q", how, cut, got, want)
			}
		}
	}
}

// TestStreamReleasesAtOnce: a chunk that cannot start a secret or a token
// field is released whole; only a possible prefix is held.
func TestStreamReleasesAtOnce(t *testing.T) {
	red := New([]string{"secret-value"}, nil)
	s := NewStream(red)
	for _, c := range []struct{ in, out string }{
		{"event: delta\ndata: {\"x\":1}\n\n", "event: delta\ndata: {\"x\":1}\n\n"},
		{"data: sec", "data: "},
		{"ret-value!\n", "secret-value!\n"},
		{"x=1 \\u00", "x=1 "},
		{"73ecret-valueX", "\\u0073ecret-valueX"},
		{"data: tok", "data: "},
		{"en=abc", ""},
		{"def&y=2", "token=abcdef&y=2"},
	} {
		if got := string(s.Next([]byte(c.in))); got != c.out {
			t.Errorf("next(%q) = %q, want %q", c.in, got, c.out)
		}
	}
	if got := s.Flush(false); got != nil {
		t.Errorf("flush of a cut stream = %q, want nothing", got)
	}
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestRedactEncodedQueryField(t *testing.T) {
	in := "/login?next=https%3A%2F%2Fapp%2Fcb%3Ftoken%3Dtk-4455667788%26x%3D1&token_type=a"
	want := "/login?next=https%3A%2F%2Fapp%2Fcb%3Ftoken%3D[REDACTED]%26x%3D1&token_type=a"
	if got := Text(in, nil); got != want {
		t.Errorf("Text(%q) = %q, want %q", in, got, want)
	}
}

// FuzzStreamSplit: whatever the text around a secret, its spelling and where
// the stream is cut, the pieces a Stream releases rebuild the input
// exactly, and redacted piece by piece they hold no spelling of the secret.
func FuzzStreamSplit(f *testing.F) {
	f.Add("data: ", "\n\n", uint8(0), uint16(3), uint16(9))
	f.Add(`{"token":"`, `"} tail`, uint8(3), uint16(12), uint16(40))
	f.Add("x=%", "%2", uint8(5), uint16(1), uint16(2))
	const secret = "Fz-s3cret/Z9 &"
	f.Fuzz(func(t *testing.T, before, after string, how uint8, cut1, cut2 uint16) {
		sp := testSpellings[int(how)%len(testSpellings)]
		text := before + spell(secret, sp) + after
		c1, c2 := int(cut1)%(len(text)+1), int(cut2)%(len(text)+1)
		if c1 > c2 {
			c1, c2 = c2, c1
		}
		red := New([]string{secret}, nil)
		s := NewStream(red)
		var raw, out []byte
		for _, chunk := range []string{text[:c1], text[c1:c2], text[c2:]} {
			piece := s.Next([]byte(chunk))
			raw = append(raw, piece...)
			red.learn(piece)
			out = append(out, red.Bytes(piece, red.Snapshot())...)
		}
		tail := s.Flush(true)
		raw = append(raw, tail...)
		out = append(out, red.Bytes(tail, red.Snapshot())...)
		if string(raw) != text {
			t.Fatalf("pieces rebuild %q, want %q", raw, text)
		}
		whole := red.Bytes([]byte(text), red.Snapshot())
		for _, name := range testSpellings {
			if v := spell(secret, name); strings.Contains(string(out), v) && !strings.Contains(string(whole), v) {
				t.Fatalf("split at %d,%d: %q survives in %q (redacted whole: %q)", c1, c2, v, out, whole)
			}
		}
	})
}
