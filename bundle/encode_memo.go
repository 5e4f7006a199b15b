package bundle

import (
	"github.com/wireproof/wireproof/internal/jsonscan"
	"github.com/wireproof/wireproof/internal/repeat"
)

// validLines remembers the last payloads found valid (internal/repeat): a
// payload equal to one of them is valid, equal bytes being the same valid
// value.
var validLines repeat.Memo[struct{}]

// validJSONLineMemo is validJSONLine, answered by a comparison for a payload
// that repeats the last valid one checked on this processor.
func validJSONLineMemo(b []byte) bool {
	return validLines.Passes(struct{}{}, b, jsonscan.ValidLine)
}
