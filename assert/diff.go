package assert

import (
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/internal/textdiff"
)

// valueDiff renders a (-want +got) diff of two compared values. A verdict
// must serialize to the same bytes live and in every replay, and go-cmp's
// text is deliberately unstable between processes, so no check uses go-cmp:
// the text is ours, one line per differing value, slices of strings element
// by element (textdiff.Lines).
func valueDiff(want, got any) string {
	ws, wok := want.([]string)
	gs, gok := got.([]string)
	if !wok || !gok {
		return fmt.Sprintf("-\t%#v\n+\t%#v\n", want, got)
	}
	var b strings.Builder
	for _, op := range textdiff.Lines(ws, gs) {
		fmt.Fprintf(&b, "%c\t%q\n", op.Kind, op.Line)
	}
	return b.String()
}
