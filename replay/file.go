package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/textdiff"
)

// Options tune an offline replay. A nil *Options means the defaults.
type Options struct {
	Engine *EngineOptions
}

// Result is the outcome of replaying one bundle.
type Result struct {
	Path     string
	Header   bundle.Header
	Scenario string
	// Verdict is the verdict recomputed from the events.
	Verdict assert.Verdict
	// Recorded is the verdict the live run wrote into the bundle, if any.
	Recorded *assert.Verdict
	// Reproduced: Recorded exists and its JSON is Verdict's, byte for byte
	// (see Comparable). Diff is the line diff of the two as indented JSON
	// (-recorded +replayed) when they differ: the same bytes in every
	// process.
	Reproduced bool
	Diff       string
	// Truncated: the bundle ended without a trailer (a killed recorder).
	Truncated       bool
	TruncatedReason string
	Events          uint64 // events read, the header included
	Bytes           int64  // uncompressed bytes read
	// DecodeErrors are the first frames or bodies that could not be decoded;
	// DecodeErrorCount counts them all.
	DecodeErrors     []DecodeError
	DecodeErrorCount int
}

// needsBody reports whether a check reads the payload of the next event, of
// kind k: ReplayFile has the reader leave the others undecoded (no
// unescaping, no base64). The recorded verdict is always read; once the
// verdict is decided nothing else is.
func (e *Engine) needsBody(k bundle.Kind) bool {
	if k == bundle.KindVerdict || e.tap != nil {
		return true // a Tap decodes every connection to the end
	}
	if !e.conf.done {
		switch k {
		case bundle.KindMark, bundle.KindWSMessage, bundle.KindStdioLine, bundle.KindHTTPBody:
			return true // the protocol decoders read them until the cut-off
		}
	}
	if e.decided() {
		return false
	}
	switch k {
	case bundle.KindMark, bundle.KindWSMessage:
		return true
	}
	return false // HTTP bodies past the cut-off (no decoder reads them), proc.*, gate.*, stdio, artifacts, logs
}

// ReplayFile replays the bundle at path: it streams its events through a fresh
// Engine and compares the verdict with the recorded one. Memory is bounded by
// the engine's state, not by the bundle. An error means the bundle could not
// be read (missing, not a bundle, corrupt before its end); a truncated tail is
// not an error (Result.Truncated).
func ReplayFile(ctx context.Context, path string, opts *Options) (*Result, error) {
	f, err := bundle.OpenFile(path)
	if err != nil {
		return nil, err // names the file
	}
	defer f.Close()
	return ReplayStream(ctx, path, f, opts)
}

// ReplayStream replays a bundle as it is read from in (a file, an object
// being downloaded), as ReplayFile does; name is its path in the Result and
// in errors. Nothing is buffered beyond the reader's bounded window.
func ReplayStream(ctx context.Context, name string, in io.Reader, opts *Options) (*Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	e := NewEngine(opts.Engine)
	r, err := bundle.NewReader(in, &bundle.ReaderOptions{Name: name, SkipBody: func(k bundle.Kind) bool { return !e.needsBody(k) }})
	if err != nil {
		return nil, err // the bundle package's errors name the file
	}
	defer r.Close()
	res, err := replayReader(ctx, e, r)
	if res != nil {
		res.Path = name
	}
	return res, err
}

// Replay replays a bundle from an open Reader (see ReplayFile).
func Replay(ctx context.Context, r *bundle.Reader, opts *Options) (*Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	return replayReader(ctx, NewEngine(opts.Engine), r)
}

func replayReader(ctx context.Context, e *Engine, r *bundle.Reader) (*Result, error) {
	s, err := newSession(e, r.Header(), len(r.Line()))
	if err != nil {
		return nil, err
	}
	for ev, err := range r.Events(ctx) {
		if err != nil {
			return nil, err
		}
		if err := s.Feed(ev, len(r.Line())); err != nil {
			return nil, err
		}
	}
	return s.Result(r.Truncated(), r.TruncatedReason()), nil
}

// Session replays a bundle its caller reads, so that a tool reading the
// bundle for its own purposes (triage's timeline) gets the verdict from the
// same pass: feed it each event as read, then take the Result.
type Session struct {
	e   *Engine
	res *Result
}

// NewSession starts a replay of a bundle whose header h was read from a line
// of headerLen bytes (the Reader's Line).
func NewSession(h bundle.Header, headerLen int, opts *Options) (*Session, error) {
	if opts == nil {
		opts = &Options{}
	}
	return newSession(NewEngine(opts.Engine), h, headerLen)
}

func newSession(e *Engine, h bundle.Header, headerLen int) (*Session, error) {
	s := &Session{e: e, res: &Result{Header: h, Scenario: h.Manifest.Scenario}}
	if err := e.FeedHeader(h); err != nil {
		return nil, err
	}
	s.res.Bytes = int64(headerLen) + 1
	return s, nil
}

// Feed takes the next event, read from a line of lineLen bytes. Its only
// error is a broken stream (a seq gap).
func (s *Session) Feed(ev *bundle.Event, lineLen int) error {
	s.res.Bytes += int64(lineLen) + 1
	if ev.Kind == bundle.KindVerdict && s.res.Recorded == nil {
		var v assert.Verdict
		if err := json.Unmarshal(ev.Body.Data, &v); err != nil {
			s.e.keepError(ev.Seq, "", fmt.Errorf("recorded verdict: %w", err), ev.Body.Data)
		} else {
			s.res.Recorded = &v
		}
	}
	return s.e.Feed(ev)
}

// Result finishes the replay: the verdict, and how it compares with the
// recorded one. truncated and reason are the Reader's.
func (s *Session) Result(truncated bool, reason string) *Result {
	res, e := s.res, s.e
	res.Truncated, res.TruncatedReason = truncated, reason
	e.cut = truncated
	res.Verdict = e.Verdict()
	if res.Verdict.Scenario != "" {
		res.Scenario = string(res.Verdict.Scenario)
	}
	res.Events = e.Events()
	res.DecodeErrors, res.DecodeErrorCount = e.DecodeErrors()
	if res.Recorded != nil {
		res.Diff = VerdictDiff(*res.Recorded, Comparable(*res.Recorded, res.Verdict))
		res.Reproduced = res.Diff == ""
	}
	return res
}

// VerdictDiff compares two verdicts by their JSON: "" when they serialize
// to the same bytes, else the (-a +b) diff of their indented JSON, line by
// line. Deterministic (go-cmp's text varies between processes on purpose,
// and a replay's output must not).
func VerdictDiff(a, b assert.Verdict) string {
	ja, jb := verdictJSON(a), verdictJSON(b)
	if ja == jb {
		return ""
	}
	var out strings.Builder
	for _, op := range textdiff.Lines(strings.Split(ja, "\n"), strings.Split(jb, "\n")) {
		out.WriteByte(op.Kind)
		out.WriteByte(' ')
		out.WriteString(op.Line)
		out.WriteByte('\n')
	}
	return out.String()
}

func verdictJSON(v assert.Verdict) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%#v", v) // a Verdict always encodes
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Comparable returns the replayed verdict v as it is compared with the
// recorded one: a verdict recorded before the suites were named (no Suites)
// is compared with v without them, so bundles recorded by earlier versions
// still reproduce; everything else (status, failure, milestones) is compared
// as is.
func Comparable(recorded, v assert.Verdict) assert.Verdict {
	if recorded.Suites == nil {
		v.Suites = nil
	}
	return v
}
