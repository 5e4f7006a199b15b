package anthropic_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/model/anthropic"
)

func TestContentText(t *testing.T) {
	text := func(s string) anthropic.Block { return anthropic.Block{Type: anthropic.BlockText, Text: s} }
	tool := anthropic.Block{Type: anthropic.BlockToolUse, Name: "Bash"}
	cases := []struct {
		name string
		c    anthropic.Content
		want string
	}{
		{"none", nil, ""},
		{"no text", anthropic.Content{tool}, ""},
		{"one", anthropic.Content{tool, text("a"), tool}, "a"},
		{"two", anthropic.Content{text("a"), tool, text("b")}, "a\nb"},
		{"empty first", anthropic.Content{text(""), text("b")}, "b"},
		{"empty between", anthropic.Content{text("a"), text(""), text("b")}, "a\n\nb"},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, c.c.Text()); diff != "" {
			t.Errorf("%s: Text() (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestContentTextOneBlockNoCopy: the text of one text block is not copied
// (a request's text can be megabytes, and the scripted model reads it
// several times).
func TestContentTextOneBlockNoCopy(t *testing.T) {
	c := anthropic.Content{{Type: anthropic.BlockText, Text: strings.Repeat("x", 1<<20)}}
	if n := testing.AllocsPerRun(10, func() { _ = c.Text() }); n != 0 {
		t.Errorf("Text() of one block allocates %v times", n)
	}
}
