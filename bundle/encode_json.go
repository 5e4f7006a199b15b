package bundle

import (
	"bytes"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// This file is the writer's JSON validity check. It runs once per payload on
// the recording's hot path, so it is internal/jsonscan's iterative scan (a
// 20 KiB HTTP body cost a recursive parser about 40 µs, more than
// compressing and hashing it together) and answers only yes or no.

// validJSONLine reports whether b is exactly one JSON value (RFC 8259, nesting
// at most jsonscan.MaxDepth deep, as encoding/json accepts) with no CR or LF
// anywhere. b must already be valid UTF-8: string contents are not checked
// for it.
//
// Outside strings CR and LF could only be whitespace, and inside strings raw
// control bytes are invalid anyway, so looking for them is a vectorised
// search of the whole value, then the scan.
func validJSONLine(b []byte) bool {
	return bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0 && jsonscan.Valid(b)
}
