package record

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// piece is one line handed out by a lineSplitter, as a test sees it.
type piece struct {
	Line string
	End  lineEnd
}

// split feeds chunks to a splitter with cap max, flushes it, and returns what
// it emitted.
func split(max int, chunks ...string) []piece {
	var got []piece
	s := newLineSplitter(max, nil, func(line []byte, end lineEnd) {
		got = append(got, piece{string(line), end})
	})
	for _, c := range chunks {
		s.Write([]byte(c))
	}
	s.Flush()
	return got
}

func TestLineSplitter(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		chunks []string
		want   []piece
	}{
		{"empty stream", 8, nil, nil},
		{"one line", 8, []string{"abc\n"}, []piece{{"abc", endNewline}}},
		{"several lines in one write", 8, []string{"a\nb\nc\n"},
			[]piece{{"a", endNewline}, {"b", endNewline}, {"c", endNewline}}},
		{"line split across writes", 8, []string{"ab", "c", "d\ne"},
			[]piece{{"abcd", endNewline}, {"e", endEOF}}},
		{"empty lines are kept", 8, []string{"\n\nx\n"},
			[]piece{{"", endNewline}, {"", endNewline}, {"x", endNewline}}},
		{"carriage return is kept", 8, []string{"a\r\n"}, []piece{{"a\r", endNewline}}},
		{"last line without newline", 8, []string{"a\nbc"},
			[]piece{{"a", endNewline}, {"bc", endEOF}}},
		{"line of exactly the cap", 4, []string{"abcd\n"}, []piece{{"abcd", endNewline}}},
		{"line of exactly the cap, newline in the next write", 4, []string{"abcd", "\n"},
			[]piece{{"abcd", endNewline}}},
		{"stream ends at the cap", 4, []string{"abcd"}, []piece{{"abcd", endEOF}}},
		{"long line is cut at the cap", 4, []string{"abcdefghij\n"},
			[]piece{{"abcd", endCap}, {"efgh", endCap}, {"ij", endNewline}}},
		{"long line over many writes", 4, []string{"ab", "cd", "ef", "\n"},
			[]piece{{"abcd", endCap}, {"ef", endNewline}}},
		{"cut moves before an incomplete rune", 4, []string{"ab€\n"}, // € is 3 bytes
			[]piece{{"ab", endCap}, {"€", endNewline}}},
		{"cut keeps a complete rune", 5, []string{"ab€x\n"},
			[]piece{{"ab€", endCap}, {"x", endNewline}}},
		{"invalid bytes are cut at the cap", 2, []string{"\xff\xfe\xfd\n"},
			[]piece{{"\xff\xfe", endCap}, {"\xfd", endNewline}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := split(tt.max, tt.chunks...)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pieces (-want +got):\n%s", diff)
			}
		})
	}
}

// rebuild joins pieces back into the stream they came from.
func rebuild(ps []piece) []byte {
	var b bytes.Buffer
	for _, p := range ps {
		b.WriteString(p.Line)
		if p.End == endNewline {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// FuzzLineSplitter checks, for any input, chunking and cap, that the pieces
// rebuild the input exactly, never exceed the cap, never hold a newline, and do
// not depend on how the input was chunked.
func FuzzLineSplitter(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "lines", "*"))
	if err != nil {
		f.Fatal(err)
	}
	if len(seeds) == 0 {
		f.Fatal("no seeds in testdata/lines")
	}
	for _, name := range seeds {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(7), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, max, chunk uint8) {
		m := int(max%64) + 1
		c := int(chunk%16) + 1
		var chunks []string
		for rest := data; len(rest) > 0; {
			n := min(c, len(rest))
			chunks = append(chunks, string(rest[:n]))
			rest = rest[n:]
		}
		got := split(m, chunks...)
		if !bytes.Equal(rebuild(got), data) {
			t.Fatalf("pieces %+v do not rebuild %q", got, data)
		}
		for i, p := range got {
			if len(p.Line) > m {
				t.Fatalf("piece %d is %d bytes, over the cap %d", i, len(p.Line), m)
			}
			if bytes.IndexByte([]byte(p.Line), '\n') >= 0 {
				t.Fatalf("piece %d holds a newline: %q", i, p.Line)
			}
			if p.End == endCap && utf8.Valid(data) && !utf8.ValidString(p.Line) && m >= utf8.UTFMax {
				t.Fatalf("piece %d of valid UTF-8 was cut inside a rune: %q", i, p.Line)
			}
		}
		if whole := split(m, string(data)); !cmp.Equal(whole, got) {
			t.Fatalf("chunking changed the pieces:\n%s", cmp.Diff(whole, got))
		}
	})
}
