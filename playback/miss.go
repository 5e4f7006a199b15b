package playback

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wireproof/wireproof/internal/scrub"
	"github.com/wireproof/wireproof/redact"
	"github.com/wireproof/wireproof/t3"
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
	// Diff says where the client's request first differs from the
	// candidate, in plain words ("body.threadId: recorded "t-1", client
	// sent "t-2" (and 2 more differences)"), ids, loopback ports and times
	// aside when something else differs.
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
		fmt.Fprintf(&b, "; first difference: %s", m.Diff)
	}
	return b.String()
}

// explain says in plain words where a live value first differs from the
// recorded one: "body.threadId: recorded "t-1", client "t-2"", with how
// many other places differ. Differences in ids, loopback ports, times and
// redacted credentials (what differs between two good runs, internal/scrub)
// are passed over when another one exists.
func explain(rec, live any) string {
	var all, real []difference
	walkDiff("", rec, live, &all)
	for _, d := range all {
		if !d.scrubbed {
			real = append(real, d)
		}
	}
	ds := real
	if len(ds) == 0 {
		ds = all
	}
	if len(ds) == 0 {
		return ""
	}
	text := ds[0].String()
	if n := len(ds) - 1; n == 1 {
		text += " (and 1 more difference)"
	} else if n > 1 {
		text += fmt.Sprintf(" (and %d more differences)", n)
	}
	return text
}

// difference is one place where a live value differs from the recorded one.
type difference struct {
	path      string // "body.params[0].id"; "" for the value itself
	rec, live string // the two values as text; "" for absent
	// scrubbed: equal once ids, ports, times and redaction are scrubbed.
	scrubbed bool
}

func (d difference) String() string {
	where := d.path
	if where == "" {
		where = "the value"
	}
	switch {
	case d.rec == "":
		return fmt.Sprintf("%s: not recorded, client sent %s", where, d.live)
	case d.live == "":
		return fmt.Sprintf("%s: recorded %s, client sent none", where, d.rec)
	}
	return fmt.Sprintf("%s: recorded %s, client sent %s", where, d.rec, d.live)
}

// walkDiff appends the differences between rec and live (values as
// matching decodes them: request, JSON values, forms, strings) in a stable
// order: struct fields as declared, object keys sorted, array elements in
// order.
func walkDiff(path string, rec, live any, out *[]difference) {
	switch r := rec.(type) {
	case request:
		l, ok := live.(request)
		if !ok {
			break
		}
		if r.Method != l.Method {
			*out = append(*out, difference{path: "method", rec: r.Method, live: l.Method})
		}
		walkDiff("path", r.Path, l.Path, out)
		walkDiff("query", r.Query, l.Query, out)
		walkDiff("body", r.Body, l.Body, out)
		return
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range r {
			keys[k] = true
		}
		for k := range l {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			rv, rok := r[k]
			lv, lok := l[k]
			sub := joinPath(path, k)
			switch {
			case !rok:
				*out = append(*out, difference{path: sub, live: show(lv)})
			case !lok:
				*out = append(*out, difference{path: sub, rec: show(rv)})
			default:
				walkDiff(sub, rv, lv, out)
			}
		}
		return
	case []any:
		l, ok := live.([]any)
		if !ok {
			break
		}
		for i := range max(len(r), len(l)) {
			sub := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(r):
				*out = append(*out, difference{path: sub, live: show(l[i])})
			case i >= len(l):
				*out = append(*out, difference{path: sub, rec: show(r[i])})
			default:
				walkDiff(sub, r[i], l[i], out)
			}
		}
		return
	}
	if rec == nil && live == nil || scalar(rec) && scalar(live) && equalScalar(rec, live) {
		return
	}
	d := difference{path: path, rec: show(rec), live: show(live)}
	if rs, ok := rec.(string); ok {
		if ls, ok := live.(string); ok && scrubString(rs) == scrubString(ls) {
			d.scrubbed = true
		}
	}
	*out = append(*out, d)
}

// scalar reports whether v is a JSON scalar (comparable with ==).
func scalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, json.Number, float64:
		return true
	}
	return false
}

// joinPath adds an object key to a path: a dot before a plain name, the
// key quoted in brackets otherwise.
func joinPath(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return fmt.Sprintf("%s[%q]", path, key)
	case path == "":
		return key
	}
	return path + "." + key
}

// show is a value as a person reads it in a miss: strings quoted, JSON
// values as JSON, cut to one line.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return oneLine(fmt.Sprintf("%q", x), 120)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return oneLine(fmt.Sprint(v), 120)
	}
	return oneLine(string(b), 120)
}

// scrubString is a string as diff compares it: ids, loopback ports, times
// and the redaction marker aside.
func scrubString(s string) string {
	s = strings.ReplaceAll(s, redacted, "<REDACTED>")
	return scrub.Time.ReplaceAllString(scrub.Text(s, ""), "<TIME>")
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

// maxMissText bounds each text of a miss as it is kept and told.
const maxMissText = 2048

// told returns m as playback keeps and tells it: each text with every
// value of a token field redacted (the request's ?token=, an RPC payload's
// token, as the -o recording redacts them), then cut to maxMissText bytes
// (missText).
func (m Miss) told() Miss {
	for _, s := range []*string{&m.Request, &m.Closest, &m.Diff, &m.Reason} {
		*s = missText(*s)
	}
	return m
}

// missText redacts s and cuts it to maxMissText bytes, at a character's
// start, saying how long it was.
func missText(s string) string {
	if s == "" {
		return s
	}
	s = redact.Text(s, &redact.Options{TokenFields: t3.TokenFields})
	if len(s) <= maxMissText {
		return s
	}
	cut := maxMissText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
