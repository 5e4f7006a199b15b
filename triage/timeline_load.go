package triage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/internal/filter"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

// Load reads the bundle at path into a Timeline and replays its checks (see
// Read). An error means the bundle could not be read (missing, not a bundle,
// corrupt before its end); a truncated tail is not an error
// (Timeline.Truncated).
func Load(ctx context.Context, path string, opts *Options) (*Timeline, error) {
	r, err := bundle.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	tl, err := Read(ctx, r, opts)
	if err != nil {
		return nil, err
	}
	tl.Path, tl.Replayed.Path = path, path
	return tl, nil
}

// Read decodes the events of r into a Timeline in one pass, with one decode
// of each event: the events go through a replay engine, the code path of
// `wireproof replay`, whose hooks build the timeline (every event, the calls
// its decoders rebuild to the end of the bundle) while it computes the
// verdict (Timeline.Replayed). r's payloads must not be skipped.
func Read(ctx context.Context, r *bundle.Reader, opts *Options) (*Timeline, error) {
	b := newBuilder(opts)
	b.tl.Header = r.Header()
	var spec *delivery.Spec
	if opts != nil {
		spec = opts.Delivery
	}
	res, err := replay.Replay(ctx, r, &replay.Options{Engine: &replay.EngineOptions{
		OnBundleEvent: b.add,
		Tap:           &replay.Tap{RPC: b.onRPC, Protocol: b.protocolEvent},
		Scenarios:     []replay.Scenario{delivery.SpecOr(spec).Observed(b.firstBad.Observe)},
	}})
	if err != nil {
		return nil, err
	}
	tl := b.tl
	tl.Replayed, tl.Recorded = res, res.Recorded
	tl.Truncated, tl.TruncatedReason = res.Truncated, res.TruncatedReason
	// Every line before the trailer, the header (seq 0) included, as the
	// trailer, replay, index and view count them.
	tl.Events = b.cur.Seq + 1
	b.finishFlags()
	tl.FirstBad = b.firstBad.Result(res)
	return tl, nil
}

type builder struct {
	tl         *Timeline
	maxBody    int
	maxSummary int
	cur        bundle.Event // seq, t and kind of the event being fed
	http       map[string]*HTTPExchange
	ws         map[string]*WSConn
	calls      map[*effectrpc.Call]*RPCCall
	pcalls     map[*protocol.Call]*RPCCall
	flags      filter.Flagger // the flags events carry by themselves
	firstBad   *FirstBadTracker
}

func newBuilder(opts *Options) *builder {
	b := &builder{tl: &Timeline{}, maxBody: DefaultMaxBody, maxSummary: 160,
		http: map[string]*HTTPExchange{}, ws: map[string]*WSConn{}, calls: map[*effectrpc.Call]*RPCCall{},
		pcalls: map[*protocol.Call]*RPCCall{}, firstBad: NewFirstBadTracker()}
	if opts != nil {
		if opts.MaxBody > 0 {
			b.maxBody = opts.MaxBody
		}
		if opts.MaxSummary > 0 {
			b.maxSummary = opts.MaxSummary
		}
	}
	return b
}

// body copies at most maxBody bytes of p.
func (b *builder) body(p bundle.Payload) Body {
	out := Body{Binary: p.Binary, Size: int64(len(p.Data))}
	data := p.Data
	if len(data) > b.maxBody {
		data, out.Truncated = data[:b.maxBody], true
	}
	out.Data = bytes.Clone(data)
	return out
}

// appendBody adds a chunk to a body kept up to the cap.
func (b *builder) appendBody(dst *Body, p bundle.Payload) {
	dst.Size += int64(len(p.Data))
	dst.Binary = dst.Binary || p.Binary || !utf8.Valid(p.Data)
	room := b.maxBody - len(dst.Data)
	data := p.Data
	if len(data) > room {
		data, dst.Truncated = data[:max(room, 0)], true
	}
	dst.Data = append(dst.Data, data...)
}

// add is the engine's per-event hook: one entry per event, and what the
// event says of its HTTP exchange, socket, gate, process or run.
func (b *builder) add(ev *bundle.Event) {
	tl := b.tl
	b.cur = bundle.Event{Seq: ev.Seq, T: ev.T, Kind: ev.Kind}
	e := Entry{Seq: ev.Seq, T: ev.T, Kind: ev.Kind, Conn: ev.Conn, Lane: laneOf(ev.Kind)}
	e.Summary = clipLine(b.summary(ev), b.maxSummary)
	tl.Entries = append(tl.Entries, e)
	if k, why := b.flags.Flag(ev); k != "" {
		b.flag(ev.Seq, ev.T, k, ev.Conn, filter.FlagText(why, e.Summary))
	}

	switch ev.Kind {
	case bundle.KindHTTPRequest:
		x := &HTTPExchange{Conn: ev.Conn, Method: ev.Method, URL: ev.URL, Header: ev.Header, RequestSeq: ev.Seq, RequestT: ev.T}
		b.http[ev.Conn] = x
		tl.HTTP = append(tl.HTTP, x)
	case bundle.KindHTTPResponse:
		if x := b.http[ev.Conn]; x != nil {
			x.Status, x.RespHeader, x.ResponseSeq, x.ResponseT, x.responseSeen = ev.Status, ev.Header, ev.Seq, ev.T, true
		}
	case bundle.KindHTTPBody:
		if x := b.http[ev.Conn]; x != nil {
			if ev.Dir == bundle.DirClientToServer {
				b.appendBody(&x.Request, ev.Body)
			} else {
				if x.FirstByteT == 0 {
					x.FirstByteT = ev.T
				}
				b.appendBody(&x.Response, ev.Body)
			}
		}
	case bundle.KindHTTPEnd:
		if x := b.http[ev.Conn]; x != nil {
			x.EndSeq, x.EndT, x.Err = ev.Seq, ev.T, ev.Err
			x.Response.Truncated = x.Response.Truncated || ev.Truncated
			delete(b.http, ev.Conn)
			b.threadRead(x)
		}
	case bundle.KindWSOpen:
		c := &WSConn{Conn: ev.Conn, URL: ev.URL, Header: ev.Header, Subprotocol: ev.Name, OpenSeq: ev.Seq, OpenT: ev.T}
		b.ws[ev.Conn] = c
		tl.WS = append(tl.WS, c)
	case bundle.KindWSMessage:
		if c := b.ws[ev.Conn]; c != nil {
			c.Messages = append(c.Messages, WSMessage{Seq: ev.Seq, T: ev.T, Dir: ev.Dir, Body: b.body(ev.Body)})
		}
	case bundle.KindWSClose:
		if c := b.ws[ev.Conn]; c != nil {
			c.Closes = append(c.Closes, WSClose{Seq: ev.Seq, T: ev.T, Dir: ev.Dir, Code: ev.Code, Reason: ev.Reason, Err: ev.Err})
			if !c.closed {
				c.closed = true
				c.CloseSeq, c.CloseT, c.CloseDir, c.CloseCode, c.CloseReason, c.Err = ev.Seq, ev.T, ev.Dir, ev.Code, ev.Reason, ev.Err
			}
		}
	case bundle.KindGateRequest:
		tl.Gates = append(tl.Gates, GateEvent{Seq: ev.Seq, T: ev.T, Method: ev.Method, URL: ev.URL, Body: b.body(ev.Body)})
	case bundle.KindGateRelease:
		tl.Gates = append(tl.Gates, GateEvent{Seq: ev.Seq, T: ev.T, Release: true, URL: ev.URL, Status: ev.Status, Body: b.body(ev.Body)})
	case bundle.KindProcStart, bundle.KindProcReady, bundle.KindProcSignal, bundle.KindProcExit:
		tl.Procs = append(tl.Procs, ProcEvent{Seq: ev.Seq, T: ev.T, Kind: ev.Kind, Conn: ev.Conn, Detail: e.Summary})
	case bundle.KindProcLog:
		tl.Logs = append(tl.Logs, LogLine{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Stream: ev.Type, Text: logText(ev.Body.Data, b.maxBody)})
	case bundle.KindMark:
		tl.Marks = append(tl.Marks, Mark{Seq: ev.Seq, T: ev.T, Name: ev.Name, Body: b.body(ev.Body)})
		b.firstBad.Mark(ev)
		if ev.Name == replay.MarkRun {
			var info replay.RunInfo
			if json.Unmarshal(ev.Body.Data, &info) == nil && info.ThreadID != "" {
				tl.ParentThread = info.ThreadID
			}
		}
	case bundle.KindArtifact:
		tl.Artifacts = append(tl.Artifacts, Artifact{Seq: ev.Seq, T: ev.T, Name: ev.Name, Body: b.body(ev.Body)})
	}
}

func laneOf(k bundle.Kind) Lane {
	switch {
	case strings.HasPrefix(string(k), "proc."), strings.HasPrefix(string(k), "stdio."):
		return LaneServer
	case strings.HasPrefix(string(k), "http."):
		return LaneHTTP
	case strings.HasPrefix(string(k), "ws."):
		return LaneWS
	case strings.HasPrefix(string(k), "gate."):
		return LaneGate
	case k == bundle.KindMark:
		return LaneMarks
	}
	return LaneRun
}

// onRPC is the Tap's Effect RPC hook: it records the correlated calls and
// the parent's projections they carry.
func (b *builder) onRPC(r *effectrpc.Step) {
	if r.Err != nil {
		b.tl.RPCErrors = append(b.tl.RPCErrors, Entry{Seq: r.Seq, T: r.T, Kind: bundle.KindWSMessage, Lane: LaneWS, Conn: r.Conn,
			Summary: clipLine(r.Err.Error()+": "+string(r.Raw), b.maxSummary)})
		return
	}
	call := r.Call
	if call == nil {
		return
	}
	rc := b.calls[call]
	if rc == nil {
		rc = &RPCCall{Protocol: protocol.EffectRPC, Conn: call.Conn, ID: call.ID, Method: call.Method, ThreadID: call.ThreadID, StartSeq: call.RequestSeq, StartT: r.T}
		if m := r.Message; m != nil && m.Tag == effectrpc.TagRequest {
			rc.Payload = b.body(bundle.Text(m.Payload))
			if call.Method == t3.MethodLaunchThread && b.tl.ParentThread == "" {
				b.tl.ParentThread = call.ThreadID
			}
		}
		b.calls[call] = rc
		b.tl.Calls = append(b.tl.Calls, rc)
	}
	if m := r.Message; m != nil {
		b.noteRPC(r.Seq, m, call)
		b.noteCall(r.Seq, rc)
	}
	rc.Chunks, rc.Acks, rc.Outcome, rc.Interruped = call.Chunks, call.Acks, call.Outcome, call.Interrupted
	if m := r.Message; m != nil && call.ThreadID != "" && call.ThreadID == b.tl.ParentThread {
		switch {
		case m.Tag == effectrpc.TagChunk:
			b.snapshots(m.Values, r, call.Method)
		case m.Tag == effectrpc.TagExit && m.Exit != nil && m.Exit.Tag == effectrpc.ExitSuccess:
			b.answer(call.Method, m.Exit.Value, r)
		}
	}
	if r.Ended {
		rc.Ended, rc.EndSeq, rc.EndT, rc.Reason = true, call.EndSeq, r.T, call.Reason
		if call.Exit != nil {
			if raw, err := json.Marshal(call.Exit); err == nil {
				rc.Exit = b.body(bundle.Text(raw))
			}
		}
		if call.Cause != nil {
			rc.Cause = causeText(call.Cause)
		}
		delete(b.calls, call)
	}
}

func (b *builder) keepParent(raw json.RawMessage, source string, seq uint64, t int64) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	b.tl.LastParent = &Projection{Seq: seq, T: t, Source: source, JSON: bytes.Clone(raw)}
}

func (b *builder) snapshots(values json.RawMessage, r *effectrpc.Step, method string) {
	var items []struct {
		Kind       string          `json:"kind"`
		Projection json.RawMessage `json:"projection"`
	}
	if json.Unmarshal(values, &items) != nil {
		return
	}
	for _, it := range items {
		if it.Kind == t3.ItemKindSnapshot {
			b.keepParent(it.Projection, method+" snapshot", r.Seq, r.T)
		}
	}
}

func (b *builder) answer(method string, value json.RawMessage, r *effectrpc.Step) {
	switch method {
	case t3.MethodLaunchThread:
		var v struct {
			Projection json.RawMessage `json:"projection"`
		}
		if json.Unmarshal(value, &v) == nil {
			b.keepParent(v.Projection, method+" answer", r.Seq, r.T)
		}
	case t3.MethodGetProjection:
		b.keepParent(value, method+" answer", r.Seq, r.T)
	}
}

// threadRead keeps the projection an HTTP read of the parent thread returned.
func (b *builder) threadRead(x *HTTPExchange) {
	if b.tl.ParentThread == "" || x.Status != 200 || x.Response.Truncated {
		return
	}
	u, err := url.Parse(x.URL)
	if err != nil || u.Path != t3.PathThreadsPrefix+b.tl.ParentThread {
		return
	}
	var v struct {
		Projection json.RawMessage `json:"projection"`
	}
	if json.Unmarshal(x.Response.Data, &v) == nil {
		b.keepParent(v.Projection, "HTTP "+x.Method+" "+u.Path, x.EndSeq, x.EndT)
	}
}

// summary says in one line what an event was.
func (b *builder) summary(ev *bundle.Event) string {
	if ev.Kind == bundle.KindHeader {
		return "recording started: " + b.tl.Header.Tool
	}
	return Summary(ev)
}

// payloadText is the start of a payload as text, for a summary: never more
// than a few KiB of it is copied.
func payloadText(p bundle.Payload) string {
	if p.Binary || !utf8.Valid(p.Data) {
		return fmt.Sprintf("<%d bytes binary>", len(p.Data))
	}
	if len(p.Data) > 4<<10 {
		return string(p.Data[:4<<10]) + "…"
	}
	return string(p.Data)
}

// logText keeps a log line as written, up to n bytes.
func logText(b []byte, n int) string {
	if len(b) > n {
		return strings.ToValidUTF8(string(b[:n]), "") + "…"
	}
	return string(b)
}

// clipLine folds line breaks and cuts s to n runes, marking the cut.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// noteRPC names an RPC message on the timeline entry of the frame that
// carried it.
func (b *builder) noteRPC(seq uint64, m *effectrpc.Message, call *effectrpc.Call) {
	n := len(b.tl.Entries)
	if n == 0 || b.tl.Entries[n-1].Seq != seq {
		return
	}
	e := &b.tl.Entries[n-1]
	s := m.Tag
	switch {
	case m.Tag == effectrpc.TagRequest:
		s += " " + call.Method
	case m.Tag == effectrpc.TagExit && m.Exit != nil:
		s += " " + m.Exit.Tag + " " + call.Method
	default:
		s += " " + call.Method
	}
	s += " #" + call.ID
	if e.RPC != "" {
		if len(e.RPC) > 400 {
			return // an array frame of many messages: the first ones say enough
		}
		e.RPC += "; "
	}
	e.RPC += s
}
