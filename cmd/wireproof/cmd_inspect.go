package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/filter"
	"github.com/wireproof/wireproof/triage"
)

// inspectOptions are the flags of `wireproof inspect`.
type inspectOptions struct {
	JSON   bool
	Kinds  []string // kind prefixes; an event matches any of them
	Conns  []string // connection ids; an event matches any of them
	From   time.Duration
	To     time.Duration // 0 with toSet false means no upper bound
	Limit  int           // events shown; 0 means all
	Full   bool          // print payloads whole
	Seq    string        // "N" or "A-B": a seq range to show
	Around uint64        // show the events within aroundContext of this seq (0: off)
	Calls  bool          // print the correlated RPC calls instead of the timeline
	Quiet  bool          // the timeline without the summary
	Filter string        // a filter expression (docs/filter.md)
	Flags  bool          // print the error flags instead of the timeline

	expr  *filter.Expr
	track *filter.Tracker  // the filter's context: each event's exchange or connection
	tl    *triage.Timeline // the calls and flags the filter reads, when it reads them

	seqFrom, seqTo uint64 // parsed from Seq or Around; seqTo 0 means no range

	toSet          bool
	stdout, stderr io.Writer
	width          int // timeline columns; 0 means defaultInspectWidth
}

// defaultInspectWidth is the timeline width when stdout is not a terminal, so
// output piped to a file or compared in a test does not depend on where it ran.
const defaultInspectWidth = 120

// newInspectCommand builds `wireproof inspect`.
func newInspectCommand(g *globalOptions) *cobra.Command {
	var opts inspectOptions
	cmd := &cobra.Command{
		Use:   "inspect [flags] BUNDLE|s3://BUCKET/KEY",
		Short: "Summarise a bundle and print its events as a timeline",
		Long: `inspect prints a summary of a bundle (header, manifest, counts per kind and per
connection, payload and compressed sizes, truncation, trailer digest) and then a
timeline, one line per event, with payloads abbreviated to the terminal width
(--full prints them whole).

Filters select the events shown: --kind takes kind prefixes (--kind ws takes every
ws.* event), --conn connection ids, --from and --to a time range relative to the
start of the recording (Go durations, 1.5s, 200ms, or seconds, 0.2), --seq a seq or a range (86,
80-90), --around the events either side of a seq (the @seq a failed check names;
its line is marked with >),
--limit a number of events, --filter an expression over the events and their
decoded content (mitmproxy's ~b, ~bq, ~bs, ~c, ~u, ~m, ~h, !, &, |, and ~k kind,
~conn, ~dir, ~rpc, ~outcome, ~j JSON path, ~seq, ~time, ~e and ~flag for the
error flags; docs/filter.md). Every filter given must match.

--flags prints what went wrong instead, one flag a line in seq order
(non-zero exits, stderr lines, 4xx/5xx answers, failed or unanswered calls,
decode errors, the events failing checks were decided at), then the first bad
state of a failing run: the earliest observation from which the failing
check already saw the value it failed with.

--calls prints the RPC calls instead, correlated by request id (Effect RPC over
WebSockets; JSON-RPC 2.0 over stdio lines, WebSockets and HTTP; the stream-json
of provider processes: control requests, tool_use → tool_result, turns):
connection, id, method, the seqs of the request and of its end, the outcome;
then the messages that answer no call or break their protocol.

--json prints bundle lines instead, exactly as they are stored: the header line,
the events that pass the filters and, when no filter or limit is set, the trailer.
Without filters the output is the whole decompressed bundle.

A truncated bundle (a recorder that was killed) prints everything readable, says
so on stderr, and exits 0. A file that is missing, not a bundle, or broken before
its end exits 3; one whose stored bytes are not what its writer wrote is
damaged and exits 7.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.toSet = cmd.Flags().Changed("to")
			opts.stdout, opts.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			if f, ok := opts.stdout.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
				if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 40 {
					opts.width = w
				}
			}
			return runInspect(cmd.Context(), opts, args)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the selected lines as NDJSON in the bundle's own encoding")
	f.StringArrayVar(&opts.Kinds, "kind", nil, "show events whose kind starts with `K` (repeatable)")
	f.StringArrayVar(&opts.Conns, "conn", nil, "show events of connection `C` (repeatable)")
	durationFlag(f, &opts.From, "from", 0, "show events at or after `DUR` from the start (a duration, 1.5s, or seconds)")
	durationFlag(f, &opts.To, "to", 0, "show events at or before `DUR` from the start (a duration, 1.5s, or seconds)")
	f.IntVar(&opts.Limit, "limit", 0, "show at most `N` events (0: all)")
	f.BoolVar(&opts.Full, "full", false, "print payloads whole instead of abbreviated")
	f.StringVar(&opts.Seq, "seq", "", "show the events with seq `N` or in the range A-B")
	f.Uint64Var(&opts.Around, "around", 0, fmt.Sprintf("show the %d events either side of seq `N` (where a check failed)", aroundContext))
	f.BoolVar(&opts.Calls, "calls", false, "print the RPC calls correlated by request id instead of the timeline")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print the timeline without the summary")
	f.BoolVar(&opts.Flags, "flags", false, "print the error flags (exits, stderr, 4xx/5xx, failed calls, decode errors, failed checks) and the first bad state instead of the timeline")
	f.StringVar(&opts.Filter, "filter", "", "show events matching the filter expression `EXPR` (docs/filter.md: '~k ws.message & ~b notification')")
	completeValues(cmd, "kind", kindValues()...)
	return cmd
}

func runInspect(ctx context.Context, opts inspectOptions, args []string) (err error) {
	if opts.stdout == nil {
		opts.stdout = os.Stdout
	}
	if opts.stderr == nil {
		opts.stderr = os.Stderr
	}
	if opts.width <= 0 {
		opts.width = defaultInspectWidth
	}
	if err := opts.check(args); err != nil {
		return err
	}
	if err := notDirectories("inspect", args); err != nil {
		return err
	}
	args, f, err := fetchBundles(ctx, args)
	if err != nil {
		return err
	}
	defer f.done(&err)
	opts.stdout = f.writer(opts.stdout)
	opts.stderr = f.writer(opts.stderr)
	path := args[0]
	if err := opts.loadFilterContext(ctx, path); err != nil {
		return err
	}
	out := bufio.NewWriterSize(opts.stdout, 64<<10)
	switch {
	case opts.Calls:
		err = inspectCalls(ctx, path, out)
	case opts.Flags:
		err = inspectFlags(ctx, path, out)
	case opts.JSON:
		err = inspectJSON(ctx, opts, path, out)
	default:
		err = inspectText(ctx, opts, path, out)
	}
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("writing output: %w", ferr)
	}
	return err
}

func (o *inspectOptions) check(args []string) error {
	if o.To > 0 {
		o.toSet = true
	}
	switch {
	case len(args) != 1:
		return usageError{fmt.Errorf("inspect takes one bundle, got %d arguments", len(args))}
	case o.Limit < 0:
		return usageError{fmt.Errorf("--limit must not be negative, got %d", o.Limit)}
	case o.From < 0:
		return usageError{fmt.Errorf("--from must not be negative, got %s", o.From)}
	case o.To < 0:
		return usageError{fmt.Errorf("--to must not be negative, got %s", o.To)}
	case o.toSet && o.To < o.From:
		return usageError{fmt.Errorf("--to %s is before --from %s", o.To, o.From)}
	case o.Seq != "" && o.Around > 0:
		return usageError{errors.New("--seq and --around select the same thing: give one")}
	}
	if o.Around > 0 {
		o.seqFrom, o.seqTo = o.Around-min(o.Around, aroundContext), o.Around+aroundContext
	}
	if o.Seq != "" {
		a, b, isRange := strings.Cut(o.Seq, "-")
		from, err1 := strconv.ParseUint(a, 10, 64)
		to, err2 := from, error(nil)
		if isRange {
			to, err2 = strconv.ParseUint(b, 10, 64)
		}
		if err1 != nil || err2 != nil || to < from {
			return usageError{fmt.Errorf("--seq %q: want N or A-B with A <= B", o.Seq)}
		}
		o.seqFrom, o.seqTo = from, to
	}
	if o.Flags && o.Calls {
		return usageError{errors.New("--flags and --calls each replace the timeline: give one")}
	}
	if o.Filter != "" {
		if o.Calls {
			return usageError{errors.New("--filter selects timeline events; --calls lists calls: give one")}
		}
		e, err := filter.Parse(o.Filter)
		if err != nil {
			return usageError{fmt.Errorf("--filter: %w", err)}
		}
		o.expr = e
	}
	return nil
}

// loadFilterContext reads what the filter needs of the decoders (the calls
// an event carried, the flags, each exchange's answer), by triage's one
// pass, before the timeline is streamed.
func (o *inspectOptions) loadFilterContext(ctx context.Context, path string) error {
	if o.expr == nil {
		return nil
	}
	tl, err := loadTimeline(ctx, path)
	if err != nil {
		return err
	}
	o.tl = tl
	// An exchange's status and response headers are known from its request
	// on: ~c and ~hs take every event of the exchange.
	answers := map[uint64]*triage.HTTPExchange{}
	for _, x := range tl.HTTP {
		answers[x.RequestSeq] = x
	}
	o.track = filter.NewTracker()
	o.track.Answer = func(requestSeq uint64) (int, http.Header) {
		if x := answers[requestSeq]; x != nil {
			return x.Status, x.RespHeader
		}
		return 0, nil
	}
	return nil
}

// filterMatch evaluates --filter on ev, which must be every event in order.
func (o *inspectOptions) filterMatch(ev *bundle.Event) bool {
	s := o.track.Subject(ev)
	n := o.expr.Needs()
	if n.Summary {
		s.Summary = triage.Summary(ev)
	}
	for _, c := range o.tl.CallsAt(ev.Seq) {
		s.Calls = append(s.Calls, filter.Call{Method: c.Method, Outcome: string(c.Outcome)})
	}
	for _, f := range o.tl.FlagsAt(ev.Seq) {
		if !slices.Contains(s.Flags, f) {
			s.Flags = append(s.Flags, f)
		}
	}
	return o.expr.Match(&s)
}

// aroundContext is how many events --around shows either side of its seq.
const aroundContext = 8

// filtered reports whether any filter or limit is set.
func (o *inspectOptions) filtered() bool {
	return len(o.Kinds) > 0 || len(o.Conns) > 0 || o.From > 0 || o.toSet || o.Limit > 0 || o.seqTo > 0 || o.expr != nil
}

// match reports whether ev passes the filters (the limit aside).
func (o *inspectOptions) match(ev *bundle.Event) bool {
	if o.expr != nil && !o.filterMatch(ev) {
		return false
	}
	if len(o.Kinds) > 0 && !slices.ContainsFunc(o.Kinds, func(k string) bool { return strings.HasPrefix(string(ev.Kind), k) }) {
		return false
	}
	if len(o.Conns) > 0 && !slices.Contains(o.Conns, ev.Conn) {
		return false
	}
	if o.seqTo > 0 && (ev.Seq < o.seqFrom || ev.Seq > o.seqTo) {
		return false
	}
	t := time.Duration(ev.T)
	return t >= o.From && (!o.toSet || t <= o.To)
}

// openBundle opens a bundle for inspect, mapping failure to exit status 3.
// Bodies are skipped when only the envelope is needed.
func openBundle(path string, skipBodies bool) (*bundle.Reader, error) {
	var opts bundle.ReaderOptions
	if skipBodies {
		opts.SkipBody = func(bundle.Kind) bool { return true }
	}
	r, err := bundle.Open(path, &opts)
	if err != nil {
		return nil, unreadableError{err}
	}
	return r, nil
}

// eachEvent calls fn for every event of r. It returns nil at the end of the
// bundle, whether it was truncated or not.
func eachEvent(ctx context.Context, r *bundle.Reader, fn func(ev *bundle.Event) bool) error {
	for ev, err := range r.Events(ctx) {
		switch {
		case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return interruptedError{err}
		case err != nil:
			return unreadableError{err}
		case !fn(ev):
			return nil
		}
	}
	return nil
}

// warnTruncated says on stderr that the evidence was cut short.
func warnTruncated(opts inspectOptions, path string, r *bundle.Reader) {
	if r.Truncated() {
		fmt.Fprintf(opts.stderr, "wireproof: warning: %s is truncated: %s\n", path, r.TruncatedReason())
	}
}

func inspectJSON(ctx context.Context, opts inspectOptions, path string, out *bufio.Writer) error {
	// Lines are copied as stored; bodies are needed only by a filter that reads them.
	r, err := openBundle(path, opts.expr == nil || !opts.expr.Needs().Body)
	if err != nil {
		return err
	}
	defer r.Close()
	writeLine := func(line []byte) {
		out.Write(line)
		out.WriteByte('\n')
	}
	writeLine(r.Line())
	shown := 0
	var lastT int64
	err = eachEvent(ctx, r, func(ev *bundle.Event) bool {
		lastT = ev.T
		if !opts.match(ev) {
			return true
		}
		writeLine(r.Line())
		shown++
		return opts.Limit == 0 || shown < opts.Limit
	})
	if err != nil {
		return err
	}
	if r.Trailer() != nil && !opts.filtered() {
		writeLine(r.Line())
	}
	if shown == 0 && opts.filtered() {
		// stdout stays NDJSON; the note goes where a person reads it.
		fmt.Fprintln(opts.stderr, "wireproof: "+noMatch(opts, lastT))
	}
	warnTruncated(opts, path, r)
	return nil
}

// noMatch says that the filters matched nothing, and with a time window
// where the events are, so an empty timeline is not mistaken for an empty
// bundle.
func noMatch(opts inspectOptions, lastT int64) string {
	msg := "0 events matched the filters"
	if opts.From > 0 || opts.toSet {
		msg += fmt.Sprintf(" (the events run from +0s to %s)", formatOffset(lastT))
	}
	return msg
}

func inspectText(ctx context.Context, opts inspectOptions, path string, out *bufio.Writer) error {
	fi, err := os.Stat(path)
	if err != nil {
		return unreadableError{err}
	}
	// Pass 1: the summary, from envelopes and payload sizes (not with -q).
	var s *bundleSummary
	var readErr error
	if !opts.Quiet {
		r, err := openBundle(path, false)
		if err != nil {
			return err
		}
		s = newBundleSummary(path, fi.Size(), r)
		readErr = eachEvent(ctx, r, func(ev *bundle.Event) bool {
			s.add(ev, r.Line())
			return true
		})
		var intr interruptedError
		if errors.As(readErr, &intr) {
			r.Close()
			return readErr
		}
		s.finish(r, readErr)
		r.Close()
		s.print(out)
	}

	// Pass 2: the timeline, streamed so memory stays bounded.
	r, err := openBundle(path, false)
	if err != nil {
		return err
	}
	defer r.Close()
	if s != nil {
		fmt.Fprintln(out)
	}
	shown := 0
	var lastT int64
	var line []byte
	err = eachEvent(ctx, r, func(ev *bundle.Event) bool {
		lastT = ev.T
		if !opts.match(ev) {
			return true
		}
		if opts.Around > 0 {
			// --around's seq (where a check failed) is marked; the
			// other lines get the same gutter, so columns stay aligned.
			gutter := "  "
			if ev.Seq == opts.Around {
				gutter = "> "
			}
			line = appendTimelineLine(append(line[:0], gutter...), ev, opts.width-len(gutter), opts.Full)
		} else {
			line = appendTimelineLine(line[:0], ev, opts.width, opts.Full)
		}
		out.Write(line)
		shown++
		return opts.Limit == 0 || shown < opts.Limit
	})
	if err != nil {
		return err
	}
	if s == nil { // -q: what this pass read is all there is to go on
		if shown == 0 && opts.filtered() {
			fmt.Fprintln(out, noMatch(opts, lastT))
		}
		warnTruncated(opts, path, r)
		return nil
	}
	if shown == 0 && opts.filtered() {
		fmt.Fprintln(out, noMatch(opts, s.lastT))
	}
	// The summary pass read to the end even when --limit stopped this one.
	if s.truncated != "" {
		fmt.Fprintf(out, "truncated: %s\n", s.truncated)
		fmt.Fprintf(opts.stderr, "wireproof: warning: %s is truncated: %s\n", path, s.truncated)
	}
	return readErr
}

// appendTimelineLine formats one event:
//
//	seq  +1.234567s  ws.message  ws3 c2s text  {"_tag":"Request",...}
//
// abbreviating the payload so the line fits width columns unless full is set.
func appendTimelineLine(dst []byte, ev *bundle.Event, width int, full bool) []byte {
	start := len(dst)
	dst = fmt.Appendf(dst, "%6d  %s  %-13s", ev.Seq, formatOffset(ev.T), ev.Kind)
	dst = appendEnvelope(dst, ev)
	if ev.Body.Data != nil {
		dst = append(dst, "  "...)
		room := -1
		if !full {
			room = width - utf8.RuneCount(dst[start:])
		}
		dst = appendPreview(dst, ev.Body, room)
	}
	dst = trimRight(dst, start)
	return append(dst, '\n')
}

func trimRight(b []byte, start int) []byte {
	for len(b) > start && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// formatOffset prints a time since the start as +S.MMMMMMs.
func formatOffset(t int64) string {
	return fmt.Sprintf("+%d.%06ds", t/1e9, t%1e9/1e3)
}

// appendEnvelope appends the event's fields other than seq, t, kind and body.
func appendEnvelope(dst []byte, ev *bundle.Event) []byte {
	word := func(s string) {
		if s != "" {
			dst = append(dst, ' ')
			dst = append(dst, s...)
		}
	}
	word(ev.Conn)
	word(string(ev.Dir))
	word(ev.Type)
	word(ev.Name)
	word(ev.Method)
	word(ev.URL)
	if ev.Status != 0 {
		word("status=" + strconv.Itoa(ev.Status))
	}
	if ev.Code != 0 {
		word("code=" + strconv.Itoa(ev.Code))
	}
	if ev.Reason != "" {
		word("reason=" + strconv.Quote(ev.Reason))
	}
	if len(ev.Header) > 0 {
		word(fmt.Sprintf("header[%d]", len(ev.Header)))
	}
	if len(ev.Attrs) > 0 {
		word(string(ev.Attrs))
	}
	if ev.Size != 0 {
		word("size=" + strconv.FormatInt(ev.Size, 10))
	}
	if ev.Truncated {
		word("truncated")
	}
	if ev.Err != "" {
		word("err=" + strconv.Quote(ev.Err))
	}
	return dst
}

// appendPreview appends a readable form of a payload in at most room runes
// (room < 0: no limit). Text keeps its characters with control characters
// escaped; binary shows its size and leading bytes in hex.
func appendPreview(dst []byte, p bundle.Payload, room int) []byte {
	var text []byte
	// What Encoding calls base64, without its JSON check of the whole body.
	if p.Data != nil && (p.Binary || !utf8.Valid(p.Data)) {
		what := "binary"
		if !p.Binary {
			what = "not UTF-8"
		}
		lead := p.Data
		if room >= 0 && len(lead) > 32 {
			lead = lead[:32]
		}
		text = fmt.Appendf(nil, "<%d bytes %s> %s", len(p.Data), what, hex.EncodeToString(lead))
		if len(lead) < len(p.Data) {
			text = append(text, "..."...)
		}
	} else {
		// Escaped only as far as the preview can show: a 64 MiB message
		// is previewed in the time of its first line.
		limit := -1
		if room >= 0 {
			limit = max(room, 20)
		}
		text = escapeControls(p.Data, limit)
	}
	if room < 0 {
		return append(dst, text...)
	}
	room = max(room, 20)
	if utf8.RuneCount(text) <= room {
		return append(dst, text...)
	}
	n := 0
	for i := range string(text) {
		if n == room-3 {
			return append(append(dst, text[:i]...), "..."...)
		}
		n++
	}
	return append(dst, text...)
}

// escapeControls writes control characters as Go escapes so one event stays
// one line. With limit >= 0 it stops once it has written more than limit
// runes: the text that far, all a preview of limit runes reads of it.
func escapeControls(b []byte, limit int) []byte {
	size := len(b)
	if limit >= 0 {
		size = min(size, 4*limit+8)
	}
	out := make([]byte, 0, size)
	runes := 0 // written
	for _, r := range string(b) {
		if limit >= 0 && runes > limit {
			break
		}
		switch {
		case r == '\n':
			out, runes = append(out, `\n`...), runes+2
		case r == '\r':
			out, runes = append(out, `\r`...), runes+2
		case r == '\t':
			out, runes = append(out, `\t`...), runes+2
		case r < 0x20 || r == 0x7f:
			out, runes = fmt.Appendf(out, `\x%02x`, r), runes+4
		default:
			out, runes = utf8.AppendRune(out, r), runes+1
		}
	}
	return out
}

// bundleSummary is what inspect says about a bundle as a whole.
type bundleSummary struct {
	path         string
	compressed   int64
	uncompressed int64
	header       bundle.Header
	events       int
	kinds        map[bundle.Kind]int
	conns        map[string]*connSummary
	connOrder    []string // in order of first appearance
	payload      int64
	lastT        int64
	truncated    string // the reason, if truncated
	trailer      *bundle.Trailer
	digest       string // "" when nothing vouches for the trailer (unsealed)
	unverified   int
	err          error // why reading stopped before the end
}

type connSummary struct {
	kinds map[bundle.Kind]int
	bytes int64
}

func newBundleSummary(path string, compressed int64, r *bundle.Reader) *bundleSummary {
	return &bundleSummary{
		path:         path,
		compressed:   compressed,
		uncompressed: int64(len(r.Line())) + 1,
		header:       r.Header(),
		kinds:        map[bundle.Kind]int{},
		conns:        map[string]*connSummary{},
		events:       1, // the header: events are counted as the trailer counts them
	}
}

func (s *bundleSummary) add(ev *bundle.Event, line []byte) {
	s.events++
	s.kinds[ev.Kind]++
	s.payload += int64(len(ev.Body.Data))
	s.uncompressed += int64(len(line)) + 1
	s.lastT = ev.T
	if ev.Conn == "" {
		return
	}
	c := s.conns[ev.Conn]
	if c == nil {
		c = &connSummary{kinds: map[bundle.Kind]int{}}
		s.conns[ev.Conn] = c
		s.connOrder = append(s.connOrder, ev.Conn)
	}
	c.kinds[ev.Kind]++
	c.bytes += int64(len(ev.Body.Data))
}

func (s *bundleSummary) finish(r *bundle.Reader, err error) {
	s.err = err
	if r.Truncated() {
		s.truncated = r.TruncatedReason()
	}
	s.digest = r.Digest()
	s.unverified = r.Unverified()
	if s.trailer = r.Trailer(); s.trailer != nil {
		s.uncompressed += int64(len(r.Line())) + 1
	}
}

func (s *bundleSummary) print(w io.Writer) {
	row := func(label, format string, args ...any) {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%-12s", label)+fmt.Sprintf(format, args...), " "))
	}
	h := s.header
	row("file", "%s", s.path)
	row("format", "%d", h.Format)
	row("tool", "%s", h.Tool)
	row("started", "%s", h.Started.UTC().Format(time.RFC3339Nano))
	m := h.Manifest
	var facts []string
	for _, f := range [][2]string{{"scenario", m.Scenario}, {"provider", m.Provider}, {"model", m.Model}, {"revision", m.Revision}} {
		if f[1] != "" {
			facts = append(facts, f[0]+"="+f[1])
		}
	}
	if m.Dirty {
		facts = append(facts, "dirty")
	}
	row("manifest", "%s", strings.Join(facts, " "))
	for _, c := range m.Commands {
		row("", "command: %s", quoteArgs(c))
	}
	for _, k := range slices.Sorted(maps.Keys(m.Options)) {
		row("", "option %s=%s", k, m.Options[k])
	}
	row("duration", "%s", strings.TrimPrefix(formatOffset(s.lastT), "+"))
	row("events", "%d", s.events)
	row("kinds", "%s", formatKindCounts(s.kinds))
	if len(s.connOrder) > 0 {
		row("connections", "")
		width := 10 // the column fits the longest connection id, and one space more
		for _, id := range s.connOrder {
			width = max(width, len(id)+1)
		}
		for _, id := range s.connOrder {
			c := s.conns[id]
			fmt.Fprintf(w, "  %-*s%s; %d payload bytes\n", width, id, formatKindCounts(c.kinds), c.bytes)
		}
	}
	row("payload", "%d bytes", s.payload)
	ratio := 0.0
	if s.compressed > 0 {
		ratio = float64(s.uncompressed) / float64(s.compressed)
	}
	row("size", "%d bytes compressed, %d uncompressed (ratio %.1fx)", s.compressed, s.uncompressed, ratio)
	switch {
	case s.err != nil:
		row("error", "%v", s.err)
	case s.truncated != "":
		row("truncated", "%s", s.truncated)
	default:
		row("truncated", "no")
	}
	switch {
	case s.trailer != nil && s.digest != "":
		row("trailer", "digest ok (%s)", s.digest)
	case s.trailer != nil:
		// A format 2 bundle cut before or inside its seal: the trailer
		// matched the events, but no digest vouches for the last frame.
		row("trailer", "digest none: unsealed, %d events unverified", s.unverified)
	default:
		row("trailer", "none")
	}
}

// formatKindCounts prints counts per kind sorted by kind.
func formatKindCounts(kinds map[bundle.Kind]int) string {
	parts := make([]string, 0, len(kinds))
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return strings.Join(parts, ", ")
}

func quoteArgs(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$") {
			a = strconv.Quote(a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

// kindValues are the event kinds --kind completes: the kinds of a bundle and
// their families (a prefix takes every kind of its family).
func kindValues() []string {
	out := []string{"http", "ws", "gate", "proc"}
	for _, k := range []bundle.Kind{
		bundle.KindHTTPRequest, bundle.KindHTTPResponse, bundle.KindHTTPBody, bundle.KindHTTPEnd,
		bundle.KindWSOpen, bundle.KindWSMessage, bundle.KindWSClose, bundle.KindWSPing, bundle.KindWSPong, bundle.KindWSError,
		bundle.KindGateRequest, bundle.KindGateRelease,
		bundle.KindProcStart, bundle.KindProcReady, bundle.KindProcSignal, bundle.KindProcExit, bundle.KindProcLog,
		bundle.KindStdioLine, bundle.KindArtifact, bundle.KindMark, bundle.KindVerdict,
	} {
		out = append(out, string(k))
	}
	return out
}
