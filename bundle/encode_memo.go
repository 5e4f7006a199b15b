package bundle

import (
	"unicode/utf8"

	"github.com/wireproof/wireproof/internal/repeat"
)

// validLines remembers the last payloads found valid UTF-8 and valid JSON
// lines (internal/repeat): a payload equal to one of them is both, equal
// bytes being the same valid value.
var validLines repeat.Memo[struct{}]

// jsonLineMemo reports whether b is valid UTF-8 and a valid JSON line
// (validJSONLine), answered by one comparison for a payload that repeats
// the last such one checked on this processor: neither pass runs again.
func jsonLineMemo(b []byte) bool {
	return validLines.Passes(struct{}{}, b, func(b []byte) bool { return utf8.Valid(b) && validJSONLine(b) })
}
