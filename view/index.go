package view

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/filter"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/triage"
)

// maxSummary caps an event's one-line summary in the index: the index holds
// summaries, never whole payloads, so a big bundle costs a few hundred bytes
// per event. Payloads are read from the file when asked for (fetch.go).
const maxSummary = 140

// maxTicks caps the chunk, ack or body-chunk ticks kept per span.
const maxTicks = 200

// Event is one line of the event list: what the list, its filters and its
// search need, without the payload.
type Event struct {
	Seq     uint64 `json:"seq"`
	T       int64  `json:"t"`
	Kind    string `json:"kind"`
	Conn    string `json:"conn,omitempty"`
	Dir     string `json:"dir,omitempty"`
	Summary string `json:"summary"`
	// RPC names the RPC messages a ws.message carried ("Request
	// orchestration.launchThread #3, Exit Success #2").
	RPC string `json:"rpc,omitempty"`
	// Calls are the indexes (into Index.Calls) of the RPC calls this event
	// belongs to; Exchange the index (into Index.HTTP) of its HTTP exchange, -1
	// when none.
	Calls    []int32 `json:"calls,omitempty"`
	Exchange int32   `json:"exchange"`
	// Flags are the error flags the event carries (filter.Flag* names).
	Flags []string `json:"flags,omitempty"`
}

// HTTPSpan is one HTTP exchange on the waterfall.
type HTTPSpan struct {
	Conn   string  `json:"conn"`
	Method string  `json:"method"`
	URL    string  `json:"url"`
	Status int     `json:"status,omitempty"`
	Seq    uint64  `json:"seq"`
	T      int64   `json:"t"`
	RespT  int64   `json:"respT,omitempty"`
	EndSeq uint64  `json:"endSeq,omitempty"`
	EndT   int64   `json:"endT,omitempty"` // 0: never ended
	Err    string  `json:"err,omitempty"`
	Chunks []int64 `json:"chunks,omitempty"` // response body chunk times (capped)
	// Side is "mcp" for an exchange that carries JSON-RPC (MCP's Streamable
	// HTTP), "" for the client's own.
	Side string `json:"side,omitempty"`
}

// WSSpan is one WebSocket connection.
type WSSpan struct {
	Conn string `json:"conn"`
	URL  string `json:"url"`
	Seq  uint64 `json:"seq"`
	T    int64  `json:"t"`
	// CloseSeq and CloseT are the last close the bundle records: each side
	// closes on its own, and messages may follow the first close.
	CloseSeq uint64 `json:"closeSeq,omitempty"`
	CloseT   int64  `json:"closeT,omitempty"` // 0: not closed in the bundle
	Messages int    `json:"messages"`
	// Close is how it closed, in words: every close, each side's own
	// ("close by c2s 1000; close by s2c 4005 going").
	Close string `json:"close,omitempty"`
}

// CallSpan is one RPC call from its Request to the message that ended it.
type CallSpan struct {
	Index       int     `json:"index"`
	Conn        string  `json:"conn"`
	ID          string  `json:"id"`
	Method      string  `json:"method"`
	ThreadID    string  `json:"threadId,omitempty"`
	Seq         uint64  `json:"seq"`
	T           int64   `json:"t"`
	EndSeq      uint64  `json:"endSeq,omitempty"`
	EndT        int64   `json:"endT,omitempty"`
	Outcome     string  `json:"outcome"`
	Chunks      int     `json:"chunks"`
	Acks        int     `json:"acks"`
	ChunkT      []int64 `json:"chunkT,omitempty"` // chunk times (capped)
	AckT        []int64 `json:"ackT,omitempty"`
	Interrupted bool    `json:"interrupted,omitempty"`
	Cause       string  `json:"cause,omitempty"` // a failure's cause, one line
	// CauseInterrupt: the failure is only an interruption (a stream the
	// client interrupted ends so), not an error.
	CauseInterrupt bool   `json:"causeInterrupt,omitempty"`
	Reason         string `json:"reason,omitempty"` // why unknown or defect
	// Protocol is the decoder's ("anthropic" or "openai" for a model call,
	// "jsonrpc", "stream-json"; index_model.go), "" for Effect RPC.
	Protocol string `json:"protocol,omitempty"`
}

// Point is an instant on a lane: a gate request or release, a mark, a
// process event.
type Point struct {
	Seq   uint64 `json:"seq"`
	T     int64  `json:"t"`
	Kind  string `json:"kind"`
	Conn  string `json:"conn,omitempty"`
	Label string `json:"label"`
}

// ProcSpan is one life of a process, from start to exit.
type ProcSpan struct {
	Conn    string  `json:"conn"`
	Seq     uint64  `json:"seq"`
	T       int64   `json:"t"`
	ReadyT  int64   `json:"readyT,omitempty"`
	EndSeq  uint64  `json:"endSeq,omitempty"`
	EndT    int64   `json:"endT,omitempty"` // 0: still running when the bundle ended
	Exit    string  `json:"exit,omitempty"`
	Signals []int64 `json:"signals,omitempty"`
}

// Index is a bundle taken apart for the viewer in one pass, holding
// summaries and spans, not payloads.
type Index struct {
	Events  []Event    `json:"-"`
	HTTP    []HTTPSpan `json:"http"`
	WS      []WSSpan   `json:"ws"`
	Calls   []CallSpan `json:"calls"`
	Procs   []ProcSpan `json:"procs"`
	Points  []Point    `json:"points"` // gate, marks, verdict, artifacts
	Logs    int        `json:"logs"`
	LastT   int64      `json:"lastT"`
	Kinds   []string   `json:"kinds"`   // kinds present, sorted
	Conns   []string   `json:"conns"`   // connections present, sorted
	Methods []string   `json:"methods"` // RPC and HTTP methods present, sorted
	// RPCErrors are frames the correlator could not decode.
	RPCErrors []Point `json:"rpcErrors,omitempty"`
	// Flags are what went wrong, in seq order: the classification triage
	// and inspect use (internal/filter), from this one pass.
	Flags []triage.Flag `json:"flags"`

	Truncated       bool   `json:"truncated,omitempty"`
	TruncatedReason string `json:"truncatedReason,omitempty"`
}

type indexer struct {
	ix      *Index
	http    map[string]int32 // open exchange by conn
	ws      map[string]int
	calls   map[*effectrpc.Call]int32
	models  map[*protocol.Call]int32 // open model calls (index_model.go)
	procs   map[string]int
	kinds   map[string]bool
	conns   map[string]bool
	methods map[string]bool
	// RPC labels of the event at rpcAt (an index into ix.Events), joined
	// onto it when the calls move on to another event.
	rpcAt int
	rpc   []string
	done  bool // the bundle was read: the ends the Tap makes at its end label no event
	flags filter.Flagger
}

// bodyKinds are the kinds whose payloads the index reads: the RPC frames,
// marks (the run mark names the gate) and the small bodies summaries quote.
func bodyKinds(k bundle.Kind) bool {
	switch k {
	case bundle.KindWSMessage, bundle.KindMark, bundle.KindProcLog, bundle.KindProcReady, bundle.KindStdioLine,
		bundle.KindHTTPBody, bundle.KindGateRelease:
		return true
	}
	return false
}

func newIndexer(h bundle.Header) *indexer {
	x := &indexer{ix: &Index{}, http: map[string]int32{}, ws: map[string]int{}, calls: map[*effectrpc.Call]int32{}, models: map[*protocol.Call]int32{},
		procs: map[string]int{}, kinds: map[string]bool{}, conns: map[string]bool{}, methods: map[string]bool{}}
	x.rpcAt = -1
	x.add(&bundle.Event{Kind: bundle.KindHeader}, "recording started: "+h.Tool)
	return x
}

// read marks the end of the bundle's events: the calls the replay session
// ends after it (at the bundle's last event) end their spans but label no
// event, as their ends were not on the wire.
func (x *indexer) read() {
	x.flushRPC()
	x.done = true
}

// finish completes the index once the session has ended its calls; last is
// the bundle's last event.
func (x *indexer) finish(last *bundle.Event, r *bundle.Reader) *Index {
	ix := x.ix
	ix.LastT = last.T
	ix.Truncated, ix.TruncatedReason = r.Truncated(), r.TruncatedReason()
	ix.Kinds, ix.Conns, ix.Methods = sortedSet(x.kinds), sortedSet(x.conns), sortedSet(x.methods)
	return ix
}

// finishFlags adds the flags known once the bundle is read (calls that
// ended badly, undecodable frames, the checks that failed in res), orders
// them by seq and marks their events.
func (x *indexer) finishFlags(res *replay.Result) {
	ix := x.ix
	for _, c := range ix.Calls {
		k := filter.CallFlag(c.Outcome, c.CauseInterrupt)
		if k == "" {
			continue
		}
		seq, t := c.EndSeq, c.EndT
		if seq == 0 {
			seq, t = c.Seq, c.T
		}
		what := c.Method + " #" + c.ID + " " + c.Outcome
		if c.Reason != "" {
			what += ": " + c.Reason
		} else if c.Cause != "" {
			what += ": " + c.Cause
		}
		ix.Flags = append(ix.Flags, triage.Flag{Seq: seq, T: t, Kind: k, Conn: c.Conn, What: clipLine(what, maxSummary)})
	}
	for _, p := range ix.RPCErrors {
		ix.Flags = append(ix.Flags, triage.Flag{Seq: p.Seq, T: p.T, Kind: filter.FlagDecode, Conn: p.Conn, What: p.Label})
	}
	ix.Flags = append(ix.Flags, triage.CheckFlags(res)...)
	slices.SortStableFunc(ix.Flags, func(a, b triage.Flag) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, f := range ix.Flags {
		if i := x.eventAt(f.Seq); i >= 0 && !slices.Contains(ix.Events[i].Flags, f.Kind) {
			ix.Events[i].Flags = append(ix.Events[i].Flags, f.Kind)
		}
	}
	if ix.Flags == nil {
		ix.Flags = []triage.Flag{}
	}
	// A bundle with no exchange, socket, call or process of a kind (one
	// verify recorded without driving it: a scenario that does not apply)
	// lists none, not null: the page maps over every list.
	if ix.HTTP == nil {
		ix.HTTP = []HTTPSpan{}
	}
	if ix.WS == nil {
		ix.WS = []WSSpan{}
	}
	if ix.Calls == nil {
		ix.Calls = []CallSpan{}
	}
	if ix.Procs == nil {
		ix.Procs = []ProcSpan{}
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (x *indexer) add(ev *bundle.Event, summary string) {
	ix := x.ix
	if summary == "" {
		summary = triage.Summary(ev)
	}
	ix.Events = append(ix.Events, Event{Seq: ev.Seq, T: ev.T, Kind: string(ev.Kind), Conn: ev.Conn, Dir: string(ev.Dir),
		Summary: clipLine(summary, maxSummary), Exchange: -1})
	e := &ix.Events[len(ix.Events)-1]
	if k, why := x.flags.Flag(ev); k != "" {
		ix.Flags = append(ix.Flags, triage.Flag{Seq: ev.Seq, T: ev.T, Kind: k, Conn: ev.Conn, What: clipLine(filter.FlagText(why, e.Summary), maxSummary)})
	}
	x.kinds[e.Kind] = true
	x.conns[ev.Conn] = true
	switch ev.Kind {
	case bundle.KindHTTPRequest:
		span := HTTPSpan{Conn: ev.Conn, Method: ev.Method, URL: ev.URL, Seq: ev.Seq, T: ev.T}
		x.http[ev.Conn] = int32(len(ix.HTTP))
		ix.HTTP = append(ix.HTTP, span)
		x.methods[ev.Method] = true
		e.Exchange = x.http[ev.Conn]
	case bundle.KindHTTPResponse, bundle.KindHTTPBody, bundle.KindHTTPEnd:
		i, ok := x.http[ev.Conn]
		if !ok {
			break
		}
		e.Exchange = i
		s := &ix.HTTP[i]
		switch ev.Kind {
		case bundle.KindHTTPResponse:
			s.Status, s.RespT = ev.Status, ev.T
		case bundle.KindHTTPBody:
			if ev.Dir == bundle.DirServerToClient && len(s.Chunks) < maxTicks {
				s.Chunks = append(s.Chunks, ev.T)
			}
		case bundle.KindHTTPEnd:
			s.EndSeq, s.EndT, s.Err = ev.Seq, ev.T, ev.Err
			delete(x.http, ev.Conn)
		}
	case bundle.KindWSOpen:
		x.ws[ev.Conn] = len(ix.WS)
		ix.WS = append(ix.WS, WSSpan{Conn: ev.Conn, URL: ev.URL, Seq: ev.Seq, T: ev.T})
	case bundle.KindWSMessage:
		if i, ok := x.ws[ev.Conn]; ok {
			ix.WS[i].Messages++
		}
	case bundle.KindWSClose:
		if i, ok := x.ws[ev.Conn]; ok {
			w := &ix.WS[i]
			if w.Close != "" {
				w.Close += "; "
			}
			w.CloseSeq, w.CloseT, w.Close = ev.Seq, ev.T, w.Close+e.Summary
		}
	case bundle.KindProcStart:
		x.procs[ev.Conn] = len(ix.Procs)
		ix.Procs = append(ix.Procs, ProcSpan{Conn: ev.Conn, Seq: ev.Seq, T: ev.T})
	case bundle.KindProcReady:
		if i, ok := x.procs[ev.Conn]; ok {
			ix.Procs[i].ReadyT = ev.T
		}
	case bundle.KindProcSignal:
		if i, ok := x.procs[ev.Conn]; ok {
			ix.Procs[i].Signals = append(ix.Procs[i].Signals, ev.T)
		}
		x.point(ev, e.Summary)
	case bundle.KindProcExit:
		if i, ok := x.procs[ev.Conn]; ok {
			ix.Procs[i].EndSeq, ix.Procs[i].EndT, ix.Procs[i].Exit = ev.Seq, ev.T, e.Summary
			delete(x.procs, ev.Conn)
		}
	case bundle.KindProcLog:
		ix.Logs++
	case bundle.KindGateRequest, bundle.KindGateRelease, bundle.KindMark, bundle.KindVerdict, bundle.KindArtifact:
		x.point(ev, e.Summary)
	}
}

// flushRPC joins the pending RPC labels onto their event.
func (x *indexer) flushRPC() {
	if x.rpcAt >= 0 && len(x.rpc) > 0 {
		e := &x.ix.Events[x.rpcAt]
		s := strings.Join(x.rpc, ", ")
		if e.RPC != "" {
			s = e.RPC + ", " + s
		}
		e.RPC = clipLine(s, maxSummary)
	}
	x.rpcAt, x.rpc = -1, x.rpc[:0]
}

// eventAt is the index in ix.Events of the event with seq, -1 if none.
func (x *indexer) eventAt(seq uint64) int {
	evs := x.ix.Events
	if x.rpcAt >= 0 && evs[x.rpcAt].Seq == seq {
		return x.rpcAt
	}
	i, ok := slices.BinarySearchFunc(evs, seq, func(e Event, s uint64) int { return cmp.Compare(e.Seq, s) })
	if !ok {
		return -1
	}
	return i
}

func (x *indexer) point(ev *bundle.Event, label string) {
	x.ix.Points = append(x.ix.Points, Point{Seq: ev.Seq, T: ev.T, Kind: string(ev.Kind), Conn: ev.Conn, Label: label})
}

// onRPC receives the calls the replay session's Correlator rebuilds (its
// replay.Tap): the index is built from the same decode as the verdict.
func (x *indexer) onRPC(r *effectrpc.Step) {
	ix := x.ix
	if r.Err != nil {
		ix.RPCErrors = append(ix.RPCErrors, Point{Seq: r.Seq, T: r.T, Kind: "rpc.error", Conn: r.Conn, Label: clipLine(r.Err.Error(), maxSummary)})
		return
	}
	call := r.Call
	var ci int32 = -1
	if call != nil {
		i, ok := x.calls[call]
		if !ok {
			i = int32(len(ix.Calls))
			x.calls[call] = i
			ix.Calls = append(ix.Calls, CallSpan{Index: int(i), Conn: call.Conn, ID: call.ID, Method: call.Method,
				ThreadID: call.ThreadID, Seq: call.RequestSeq, T: r.T, Outcome: string(effectrpc.OutcomeOpen)})
			x.methods[call.Method] = true
		}
		ci = i
		s := &ix.Calls[i]
		s.Chunks, s.Acks, s.Interrupted = call.Chunks, call.Acks, call.Interrupted
		if m := r.Message; m != nil {
			switch m.Tag {
			case effectrpc.TagChunk:
				if len(s.ChunkT) < maxTicks {
					s.ChunkT = append(s.ChunkT, r.T)
				}
			case effectrpc.TagAck:
				if len(s.AckT) < maxTicks {
					s.AckT = append(s.AckT, r.T)
				}
			}
		}
		if r.Ended {
			s.EndSeq, s.EndT, s.Outcome, s.Reason = r.Seq, r.T, string(call.Outcome), call.Reason
			if call.Cause != nil {
				s.Cause, s.CauseInterrupt = clipLine(call.Cause.String(), 400), call.Cause.Interrupted()
			}
		}
	}
	// The event the message came in on (an end at a close or exit belongs to that event).
	if x.done {
		return
	}
	if i := x.eventAt(r.Seq); i >= 0 {
		if i != x.rpcAt {
			x.flushRPC()
			x.rpcAt = i
		}
		e := &ix.Events[i]
		if ci >= 0 && !slices.Contains(e.Calls, ci) {
			e.Calls = append(e.Calls, ci)
		}
		if m := r.Message; m != nil {
			x.rpc = append(x.rpc, rpcLabel(m, call))
		} else if r.Ended && call != nil {
			x.rpc = append(x.rpc, fmt.Sprintf("ends %s #%s (%s)", call.Method, call.ID, call.Outcome))
		}
	}
}

// rpcLabel names one RPC message: "Request orchestration.launchThread #0".
func rpcLabel(m *effectrpc.Message, call *effectrpc.Call) string {
	s := m.Tag
	switch {
	case m.Tag == effectrpc.TagRequest:
		s += " " + m.Method
	case m.Tag == effectrpc.TagExit && m.Exit != nil:
		s += " " + m.Exit.Tag
	}
	if id := m.Key(); id != "" {
		s += " #" + id
	}
	if call != nil && m.Tag != effectrpc.TagRequest {
		s += " " + call.Method
	}
	return s
}

// clipLine makes s one line of at most n runes.
func clipLine(s string, n int) string {
	if strings.ContainsAny(s, "\r\n\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
