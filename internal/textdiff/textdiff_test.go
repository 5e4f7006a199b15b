package textdiff_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/internal/textdiff"
)

func TestMain(m *testing.M) { testkit.Main(m, nil) }

func render(ops []textdiff.Op) string {
	var b strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&b, "%c%s|", op.Kind, op.Line)
	}
	return b.String()
}

func TestLines(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		want string
	}{
		{"equal", []string{"x", "y"}, []string{"x", "y"}, " x| y|"},
		{"both empty", nil, nil, ""},
		{"added", nil, []string{"x"}, "+x|"},
		{"removed", []string{"x"}, nil, "-x|"},
		{"changed in the middle", []string{"a", "b", "c"}, []string{"a", "B", "c"}, " a|+B|-b| c|"},
		{"moved", []string{"a", "b"}, []string{"b", "a"}, "+b| a|-b|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, render(textdiff.Lines(tt.a, tt.b))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func ExampleLines() {
	for _, op := range textdiff.Lines([]string{`"status": "passed"`, `"restart": "passed"`}, []string{`"status": "failed"`, `"restart": "passed"`}) {
		fmt.Printf("%c %s\n", op.Kind, op.Line)
	}
	// Output:
	// + "status": "failed"
	// - "status": "passed"
	//   "restart": "passed"
}
