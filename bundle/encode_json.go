package bundle

import (
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
// control bytes are invalid anyway, so jsonscan.ValidLine answers in the one
// pass of its scan, taking only spaces and tabs for whitespace.
func validJSONLine(b []byte) bool { return jsonscan.ValidLine(b) }
