package triage

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/replay"
)

// ReportOptions tune WriteReport. A nil *ReportOptions means the defaults.
type ReportOptions struct {
	// Title heads the page; "" means "wireproof report: " and the bundle's name.
	Title string
	// MaxRows bounds the timeline's rows (0 means DefaultMaxRows): beyond
	// it the page keeps the start, the events around the failing one and the
	// end, and says which seqs it left out.
	MaxRows int
	// MaxFailingEvent caps the failing event shown in full under its row
	// (0 means DefaultMaxFailingEvent).
	MaxFailingEvent int
}

// DefaultMaxRows keeps a report of a long run to a page a browser opens.
const DefaultMaxRows = 3000

// DefaultMaxFailingEvent is how much of the failing event the report shows:
// enough for any message a check judges (a projection, an Exit with its
// cause chain), bounded so one huge message cannot make the page unopenable.
const DefaultMaxFailingEvent = 4 << 20

// WriteReport renders tl as one self-contained HTML page: no external
// scripts, styles or fonts, every value escaped by html/template. The verdict
// comes first, then the manifest, the swimlane timeline with the failing event
// highlighted and anchored (#seq-N), the RPC calls, the last projection of
// the parent thread and the server log.
func WriteReport(w io.Writer, tl *Timeline, opts *ReportOptions) error {
	v := newReportView(tl, opts)
	var buf bytes.Buffer
	if err := reportTemplate.Execute(&buf, v); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// reportView is what the template reads: strings prepared here so the
// template has no logic beyond loops and conditions.
type reportView struct {
	Title           string
	Path            string
	Truncated       bool
	TruncatedReason string
	Events          uint64
	Colspan         int // columns of the timeline: seq, t, kind and the lanes

	Status string // the replayed status, else the recorded one
	// NotApplicable says why the scenario did not apply to the run's
	// provider (NotApplicableText); empty when it applied.
	NotApplicable string
	Suites        []assert.SuiteResult
	Failure       *assert.Failure
	FailureAt     string
	HasFailSeq    bool
	FailSeq       uint64
	Recorded      string
	Replayed      string
	Agreement     string // reproduced, diverged, or why it cannot be told
	VerdictDiff   string
	Milestones    string
	DecodeErrors  []string
	// FailingEvent is the failing event as the bundle holds it, indented:
	// its row's summary is one clipped line, this is all of it.
	FailingEvent string

	// Flags are what went wrong (Timeline.Flags), FirstBad where the
	// failing check's value first went wrong.
	Flags    []flagRow
	FirstBad *FirstBad

	Manifest  []kv
	Lanes     []string
	Rows      []row
	Calls     []callRow
	HTTP      []httpRow
	Parent    *parentView
	Logs      []logRow
	Artifacts []artifactView
}

type kv struct{ Key, Value string }

type flagRow struct {
	Seq                 uint64
	T, Kind, Conn, What string
}

type row struct {
	Seq   uint64
	T     string
	Kind  string
	Cells []string // one per lane; the event's summary in its own lane
	Fail  bool
	Gap   string // a row standing for events left out: what to run to see them
}

type callRow struct {
	Conn, ID, Method, Thread, Duration, Outcome, Detail string
	Seq, EndSeq                                         uint64
	Ended                                               bool
	Chunks, Acks                                        int
	Payload                                             string
}

type httpRow struct {
	Conn, Method, URL, Status, Duration string
	Seq                                 uint64
	Request, Response                   string
}

type parentView struct {
	Thread string
	Seq    uint64
	T      string
	Source string
	JSON   string
}

type logRow struct {
	Seq    uint64
	T      string
	Stream string
	Text   string
}

type artifactView struct {
	Name string
	Seq  uint64
	Text string
}

// msText is an offset since the recording started, in ms to the µs.
func msText(t int64) string { return fmt.Sprintf("%.3f ms", float64(t/1000)/1000) }

func newReportView(tl *Timeline, opts *ReportOptions) *reportView {
	v := &reportView{Path: tl.Path, Truncated: tl.Truncated, TruncatedReason: tl.TruncatedReason, Events: tl.Events}
	v.Title = "wireproof report"
	if tl.Path != "" {
		v.Title += ": " + baseName(tl.Path)
	}
	if opts != nil && opts.Title != "" {
		v.Title = opts.Title
	}
	verdict := tl.Recorded
	if tl.Replayed != nil {
		verdict = &tl.Replayed.Verdict
	}
	if verdict != nil {
		v.Status = string(verdict.Status)
		v.NotApplicable = NotApplicableText(*verdict)
		v.Suites = Suites(*verdict)
		v.Failure = verdict.Failure
		if f := verdict.Failure; f != nil {
			v.HasFailSeq, v.FailSeq = true, f.Seq
			v.FailureAt = fmt.Sprintf("%s (%s)", msText(f.T), tl.wall(f.T).Format("2006-01-02T15:04:05.000000Z07:00"))
		}
		if m := verdict.Milestones; m != nil {
			v.Milestones = prettyJSON(mustJSON(m))
		}
	} else {
		v.Status = "unknown"
	}
	for _, f := range tl.Flags {
		v.Flags = append(v.Flags, flagRow{Seq: f.Seq, T: msText(f.T), Kind: f.Kind, Conn: f.Conn, What: f.What})
	}
	v.FirstBad = tl.FirstBad
	if tl.Recorded != nil {
		v.Recorded = prettyJSON(mustJSON(tl.Recorded))
	}
	if r := tl.Replayed; r != nil {
		v.Replayed = prettyJSON(mustJSON(r.Verdict))
		switch {
		case r.Recorded == nil && !slices.ContainsFunc(tl.Marks, func(m Mark) bool { return m.Name == replay.MarkRun }):
			v.Agreement = "a plain recording (no verification run in it): there is no verdict to compare with"
		case r.Recorded == nil:
			v.Agreement = "no recorded verdict to compare with (the live run did not finish writing one)"
		case r.Reproduced:
			v.Agreement = "reproduced: the replayed verdict equals the recorded one"
		default:
			v.Agreement = "diverged: the replayed verdict differs from the recorded one"
			v.VerdictDiff = r.Diff
		}
		// The raw bytes of a decode error are left out: for a message split
		// across frames they are several recorded messages joined, which
		// could rebuild a secret the bundle holds only in pieces. Each
		// message is in the timeline as it was recorded.
		for _, d := range r.DecodeErrors {
			v.DecodeErrors = append(v.DecodeErrors, fmt.Sprintf("seq %d %s: %s", d.Seq, d.Conn, d.Err))
		}
		if n := r.DecodeErrorCount - len(r.DecodeErrors); n > 0 {
			v.DecodeErrors = append(v.DecodeErrors, fmt.Sprintf("and %d more", n))
		}
	} else {
		v.Agreement = "not replayed"
	}

	if v.HasFailSeq && tl.Path != "" {
		limit := DefaultMaxFailingEvent
		if opts != nil && opts.MaxFailingEvent > 0 {
			limit = opts.MaxFailingEvent
		}
		v.FailingEvent = failingEvent(tl.Path, v.FailSeq, limit)
	}
	v.Manifest = manifestRows(tl)
	v.Lanes = tl.SideLanes()
	v.Colspan = len(v.Lanes) + 3
	maxRows := DefaultMaxRows
	if opts != nil && opts.MaxRows > 0 {
		maxRows = opts.MaxRows
	}
	keep := keptRows(tl.Entries, v.HasFailSeq, v.FailSeq, maxRows)
	for i, e := range tl.Entries {
		if !keep(i) {
			if i == 0 || keep(i-1) {
				j := i
				for j+1 < len(tl.Entries) && !keep(j+1) {
					j++
				}
				v.Rows = append(v.Rows, row{Gap: fmt.Sprintf("%d events not shown: wireproof inspect %s --seq %d-%d",
					j-i+1, tl.Path, e.Seq, tl.Entries[j].Seq)})
			}
			continue
		}
		r := row{Seq: e.Seq, T: msText(e.T), Kind: string(e.Kind), Cells: make([]string, len(v.Lanes)), Fail: v.HasFailSeq && e.Seq == v.FailSeq}
		text := e.Summary
		if e.RPC != "" {
			text = "[" + e.RPC + "] " + text
		}
		if e.Conn != "" {
			text = e.Conn + " " + text
		}
		r.Cells[slices.Index(v.Lanes, tl.SideOf(e))] = text
		v.Rows = append(v.Rows, r)
	}
	for _, c := range tl.Calls {
		cr := callRow{Conn: c.Conn, ID: c.ID, Method: c.Method, Thread: c.ThreadID, Seq: c.StartSeq, EndSeq: c.EndSeq, Ended: c.Ended,
			Chunks: c.Chunks, Acks: c.Acks, Outcome: string(c.Outcome), Payload: bodyDisplay(c.Payload)}
		if c.Ended {
			cr.Duration = msText(c.EndT - c.StartT)
		} else {
			cr.Duration = "open"
		}
		cr.Detail = strings.TrimSpace(strings.Join(nonEmpty(c.Cause, c.Reason), "; "))
		v.Calls = append(v.Calls, cr)
	}
	for _, x := range tl.HTTP {
		hr := httpRow{Conn: x.Conn, Method: x.Method, URL: x.URL, Seq: x.RequestSeq, Request: bodyDisplay(x.Request), Response: bodyDisplay(x.Response)}
		hr.Status = "no response"
		if x.responseSeen {
			hr.Status = fmt.Sprint(x.Status)
		}
		if x.EndT != 0 {
			hr.Duration = msText(x.EndT - x.RequestT)
		} else {
			hr.Duration = "did not end"
		}
		v.HTTP = append(v.HTTP, hr)
	}
	if p := tl.LastParent; p != nil {
		v.Parent = &parentView{Thread: tl.ParentThread, Seq: p.Seq, T: msText(p.T), Source: p.Source, JSON: prettyJSON(p.JSON)}
	}
	for _, l := range tl.Logs {
		v.Logs = append(v.Logs, logRow{Seq: l.Seq, T: msText(l.T), Stream: l.Conn + " " + l.Stream, Text: l.Text})
	}
	for _, a := range tl.Artifacts {
		v.Artifacts = append(v.Artifacts, artifactView{Name: a.Name, Seq: a.Seq, Text: bodyDisplay(a.Body)})
	}
	return v
}

func manifestRows(tl *Timeline) []kv {
	h, m := tl.Header, tl.Header.Manifest
	rows := []kv{
		{"bundle", tl.Path},
		{"tool", h.Tool},
		{"format", fmt.Sprint(h.Format)},
		{"started", h.Started.UTC().Format("2006-01-02T15:04:05.000000Z07:00")},
		{"events", fmt.Sprint(tl.Events)},
		{"scenario", m.Scenario},
		{"provider", m.Provider},
		{"model", m.Model},
		{"revision", m.Revision},
		{"dirty tree", fmt.Sprint(m.Dirty)},
		{"parent thread", tl.ParentThread},
	}
	for _, c := range m.Commands {
		rows = append(rows, kv{"command", strings.Join(c, " ")})
	}
	keys := make([]string, 0, len(m.Options))
	for k := range m.Options {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		rows = append(rows, kv{"option " + k, m.Options[k]})
	}
	return slices.DeleteFunc(rows, func(r kv) bool { return r.Value == "" })
}

func nonEmpty(s ...string) []string {
	return slices.DeleteFunc(s, func(x string) bool { return x == "" })
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(fmt.Sprintf("%q", err.Error()))
	}
	return b
}

// prettyJSON indents JSON; anything else is returned as it is.
func prettyJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

// bodyDisplay is a body as text for the page: JSON indented, binary as a
// note, a truncated body marked.
func bodyDisplay(b Body) string {
	var s string
	switch {
	case len(b.Data) == 0:
		return ""
	case b.Binary || !utf8.Valid(b.Data):
		s = fmt.Sprintf("<%d bytes of binary data>", b.Size)
	case json.Valid(b.Data):
		s = prettyJSON(b.Data)
	default:
		s = string(b.Data)
	}
	if b.Truncated {
		s += fmt.Sprintf("\n… truncated: %d of %d bytes kept", len(b.Data), b.Size)
	}
	return s
}

// keptRows chooses the timeline rows a report shows when there are more than
// max: a fifth at the start, a fifth at the end, and the rest centred on the
// failing event (or in the middle when there is none).
func keptRows(entries []Entry, hasFail bool, failSeq uint64, max int) func(int) bool {
	n := len(entries)
	if n <= max {
		return func(int) bool { return true }
	}
	edge := max / 5
	mid := n / 2
	if hasFail {
		if i, found := slices.BinarySearchFunc(entries, failSeq, func(e Entry, seq uint64) int { return cmp.Compare(e.Seq, seq) }); found {
			mid = i
		}
	}
	half := (max - 2*edge) / 2
	lo, hi := mid-half, mid+half
	return func(i int) bool { return i < edge || i >= n-edge || (i >= lo && i <= hi) }
}

// failingEvent reads the event at seq from the bundle at path again, whole
// (the timeline keeps one clipped line of each), and renders it as the
// bundle's line, indented, up to limit bytes. It reads only up to seq. A
// bundle that cannot be read again gives a note instead.
func failingEvent(path string, seq uint64, limit int) string {
	r, err := bundle.Open(path, nil)
	if err != nil {
		return "cannot read the event again: " + err.Error()
	}
	defer r.Close()
	var line []byte
	for ev, err := range r.All() {
		if err != nil {
			return fmt.Sprintf("event %d is not in the bundle (%v)", seq, err)
		}
		if ev.Seq >= seq {
			if ev.Seq == seq {
				line = bundle.AppendEvent(nil, ev)
			}
			break
		}
	}
	if line == nil {
		return fmt.Sprintf("event %d is not in the bundle", seq)
	}
	if len(line) > limit {
		return string(line[:limit]) + fmt.Sprintf("\n… cut: %d of %d bytes shown (ReportOptions.MaxFailingEvent)", limit, len(line))
	}
	return prettyJSON(line)
}
