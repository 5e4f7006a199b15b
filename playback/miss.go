package playback

import (
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/scrub"
)

// Miss is a request playback could not answer from the recording.
type Miss struct {
	// Kind is "http", "websocket", "rpc" (an Effect RPC or JSON-RPC call) or
	// "message" (a message of another protocol that differs from the
	// recorded one, or a client message an RPC connection cannot decode:
	// malformed JSON, an unknown tag, a binary frame).
	Kind string `json:"kind"`
	// Request is the client's request in one line: "GET /api/x?y=1",
	// "orchestration.getThreadProjection {...}".
	Request string `json:"request"`
	// Closest is the recorded candidate most like it, "" when the recording
	// has none of its kind; ClosestSeq is its seq in the bundle.
	Closest    string `json:"closest,omitempty"`
	ClosestSeq uint64 `json:"closestSeq,omitempty"`
	// Diff is how the candidate differs (-recorded +client), ids, loopback
	// ports and times aside.
	Diff string `json:"diff,omitempty"`
	// Reason says why the closest candidate was not served when the diff
	// alone does not (an id bound to another value, every match played).
	Reason string `json:"reason,omitempty"`
}

// String is the miss as the error text the client gets.
func (m Miss) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "wireproof playback: no recorded %s matches %s", m.Kind, m.Request)
	if m.Closest == "" {
		if m.Reason != "" {
			fmt.Fprintf(&b, "; %s", m.Reason)
		} else {
			b.WriteString("; the recording has none")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "; closest recorded (seq %d): %s", m.ClosestSeq, m.Closest)
	if m.Reason != "" {
		fmt.Fprintf(&b, "; %s", m.Reason)
	}
	if m.Diff != "" {
		fmt.Fprintf(&b, "\ndiff (-recorded +client):\n%s", m.Diff)
	}
	return b.String()
}

// scrubStrings compares strings as diff does: ids, loopback ports and the
// redaction marker aside.
var scrubStrings = cmp.Transformer("scrub", func(s string) string {
	s = strings.ReplaceAll(s, redacted, "<REDACTED>")
	return scrub.Time.ReplaceAllString(scrub.Text(s, ""), "<TIME>")
})

// explain is the go-cmp diff of a recorded and a live value with ids,
// ports and times blanked; if they differ only there, the plain diff.
func explain(rec, live any) string {
	if d := cmp.Diff(rec, live, scrubStrings); d != "" {
		return d
	}
	return cmp.Diff(rec, live)
}

// Unplayed is a recorded request that was never played.
type Unplayed struct {
	Kind    string `json:"kind"` // http, websocket or rpc
	Seq     uint64 `json:"seq"`
	Request string `json:"request"`
}

// Report is what a playback session served and missed.
type Report struct {
	// Played counts requests (HTTP exchanges, WebSocket connections, RPC
	// calls) answered from the recording; Repeated those answered again
	// after every recorded match had been played (a client polling more
	// often than when it was recorded gets the last answer again, a client
	// that reconnects gets the recorded connection and its calls again).
	Played   int `json:"played"`
	Repeated int `json:"repeated"`
	// Missed counts every miss; Misses lists the first MaxListedMisses of
	// them, so a client that floods playback with requests nothing matches
	// cannot grow its memory without bound (OnMiss still sees each).
	Missed   int        `json:"missed"`
	Misses   []Miss     `json:"misses"`
	Unplayed []Unplayed `json:"unplayed"`
}

// MaxListedMisses caps Report.Misses.
const MaxListedMisses = 1000

// Clean reports whether nothing missed and every recorded request was
// played: what --strict requires.
func (r *Report) Clean() bool { return r.Missed == 0 && len(r.Misses) == 0 && len(r.Unplayed) == 0 }

// Summary is the report in a few lines for a person.
func (r *Report) Summary() string {
	var b strings.Builder
	missed := max(r.Missed, len(r.Misses))
	fmt.Fprintf(&b, "played %d, repeated %d, missed %d, never played %d\n", r.Played, r.Repeated, missed, len(r.Unplayed))
	for _, m := range r.Misses {
		fmt.Fprintf(&b, "miss: %s\n", m.String())
	}
	if more := missed - len(r.Misses); more > 0 {
		fmt.Fprintf(&b, "... and %d more misses, not listed\n", more)
	}
	for _, u := range r.Unplayed {
		fmt.Fprintf(&b, "never played: %s seq %d %s\n", u.Kind, u.Seq, u.Request)
	}
	return b.String()
}

// oneLine shortens text for a one-line summary.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "..."
	}
	return s
}
