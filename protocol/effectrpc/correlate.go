package effectrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/jsonscan"
)

// Outcome is how an RPC call ended.
type Outcome string

const (
	OutcomeOpen    Outcome = "open"    // no end seen yet
	OutcomeSuccess Outcome = "success" // Exit Success
	OutcomeFailure Outcome = "failure" // Exit Failure (typed error, defect or interruption: see Call.Cause)
	OutcomeDefect  Outcome = "defect"  // a connection-wide Defect failed it
	// OutcomeUnknown: the server was stopped, the socket closed or the bundle
	// ended while the call was open. Neither failed nor succeeded.
	OutcomeUnknown Outcome = "unknown"
	// OutcomeInterrupted: the client interrupted the call and the socket
	// closed before an Exit was seen. The call ends at that close, whichever
	// side closed, not at the server's exit or the end of the bundle.
	OutcomeInterrupted Outcome = "interrupted"
)

// Call is one RPC call, from its Request to the message that ended it.
type Call struct {
	Conn        string
	ID          string // the request id's key
	Method      string
	ThreadID    string // payload.threadId, when the payload has one
	RequestSeq  uint64
	Chunks      int
	Acks        int
	Interrupted bool // the client sent an Interrupt
	Outcome     Outcome
	EndSeq      uint64
	Exit        *Exit  // its Value and Cause alias the frame: copy them to keep them past the event
	Cause       *Cause // Exit Failure, decoded
	Reason      string // why the outcome is unknown or a defect, in words
}

// Step is one step of the decoded RPC timeline, handed to the
// Correlator's callback in seq order.
type Step struct {
	Seq     uint64
	T       int64
	Conn    string
	Dir     bundle.Dir
	Message *Message // nil for an end without a message (unknown outcome, defect fan-out) and for errors; its raw fields alias the frame
	Call    *Call    // the call the message belongs to, if any
	Ended   bool     // this event ended Call
	Err     error    // the frame (or part of it) could not be decoded; Raw holds it
	Raw     []byte
}

// DefaultMaxLine caps a buffered ndjson line, as Effect does.
const DefaultMaxLine = 16 << 20

// Correlator rebuilds RPC calls from WebSocket events: frames are split into
// messages (Effect json, array frames, ndjson with lines split across frames,
// JSON-RPC 2.0) and messages are matched to calls by request id key. Closed
// calls are forgotten, so memory is bounded by the open calls and partial
// lines. Not safe for concurrent use.
type Correlator struct {
	emit    func(*Step)
	conns   map[string]*wsConn
	maxLine int
	path    string
	lean    *lean
	msgs    []Message // reused for each frame's messages
}

// Options tune a Correlator. A nil *Options means the defaults.
type Options struct {
	// Path is the URL path of the sockets that carry RPC from their opening
	// (T3's /ws): their frames are judged from the first, where another
	// socket's are once one has decoded as RPC.
	Path string
	// KnownValue, if set, returns the length of a JSON object or array that
	// rest starts with and that the caller validated before (at
	// ExitValueDepth), or 0: an Exit's value it knows is taken by a memcmp
	// instead of scanned. A long run answers the same value over and over.
	KnownValue func(rest []byte) int
}

// NewCorrelator returns a Correlator that reports every step to emit. The
// step passed to emit is reused after emit returns.
func NewCorrelator(emit func(*Step), opts *Options) *Correlator {
	c := &Correlator{emit: emit, conns: map[string]*wsConn{}, maxLine: DefaultMaxLine}
	var known func([]byte) int
	if opts != nil {
		c.path, known = opts.Path, opts.KnownValue
	}
	c.lean = newLean(known)
	return c
}

type framing int

const (
	framingUnknown framing = iota
	framingJSON            // one message (or array of messages) per frame
	framingNDJSON          // newline-terminated messages, split freely across frames
)

type wsConn struct {
	id    string
	rpc   bool // known to carry RPC: path /ws or a frame decoded as RPC
	calls map[string]*Call
	dirs  [2]dirState
	// clientClosed says how the client closed its side, while the server may
	// still answer the calls left open.
	clientClosed   string
	clientCloseSeq uint64 // the seq of the client's close
	// ended holds how the calls that ended last ended (at most maxEnded,
	// oldest forgotten first), for the messages that cross an ending on the
	// wire: a client's Interrupt or Ack after the call's Exit, or the
	// server's late Chunk or Exit after the socket closed or the call was
	// cut. Neither is an error.
	ended     map[string]Outcome
	endedRing [maxEnded]string
	endedNext int
}

// maxEnded bounds the ended calls a connection remembers, so memory does not
// grow with the number of calls.
const maxEnded = 256

func (w *wsConn) remember(id string, how Outcome) {
	if w.ended == nil {
		w.ended = make(map[string]Outcome, maxEnded)
	}
	if old := w.endedRing[w.endedNext]; old != "" {
		delete(w.ended, old)
	}
	w.ended[id] = how
	w.endedRing[w.endedNext] = id
	w.endedNext = (w.endedNext + 1) % maxEnded
}

type dirState struct {
	framing framing
	buf     []byte
	bufSeq  uint64 // seq of the frame that started buf
}

func dirIndex(d bundle.Dir) int {
	if d == bundle.DirServerToClient {
		return 1
	}
	return 0
}

func (c *Correlator) conn(id string) *wsConn {
	w := c.conns[id]
	if w == nil {
		w = &wsConn{id: id, calls: map[string]*Call{}}
		c.conns[id] = w
	}
	return w
}

// Feed takes ws.open, ws.message and ws.close events; other kinds are ignored.
// Use ServerStopped for the server's proc.exit and End at the end of the stream.
func (c *Correlator) Feed(ev *bundle.Event) {
	switch ev.Kind {
	case bundle.KindWSOpen:
		w := c.conn(ev.Conn)
		if u, err := url.Parse(ev.URL); err == nil && c.path != "" && u.Path == c.path {
			w.rpc = true
		}
	case bundle.KindWSMessage:
		c.frame(ev)
	case bundle.KindWSClose:
		if w := c.conns[ev.Conn]; w != nil {
			why := "the socket closed"
			if ev.Code != 0 {
				why = "the socket closed (" + strings.TrimSpace(fmt.Sprintf("%d %s", ev.Code, ev.Reason)) + ")"
			}
			if ev.Err != "" {
				why += ": " + ev.Err
			}
			if ev.Dir == bundle.DirClientToServer && ev.Err == "" && len(w.calls) > 0 {
				// The client closed its side: the server may still answer
				// until it closes in turn (an Effect client interrupts a
				// stream and closes at once, and the stream's Exit follows).
				// The calls end at the server's close, its exit or the end
				// of the bundle.
				w.clientClosed, w.clientCloseSeq = why, ev.Seq
				return
			}
			// The connection is kept (its calls ended) so that messages
			// recorded after the close still find how their call ended.
			c.endAll(w, ev, OutcomeUnknown, why)
		}
	}
}

// ServerStopped ends every open call on every socket with an unknown outcome:
// the server process exited, so no answer can come.
func (c *Correlator) ServerStopped(ev *bundle.Event) {
	for _, id := range slices.Sorted(maps.Keys(c.conns)) {
		c.endAll(c.conns[id], ev, OutcomeUnknown, c.conns[id].endReason("the server stopped"))
	}
}

// endReason says why a connection's calls end: how the client closed it, if
// it did, else why.
func (w *wsConn) endReason(why string) string {
	if w.clientClosed != "" {
		return w.clientClosed + " and " + why
	}
	return why
}

// End ends every open call with an unknown outcome (the bundle ended) and
// reports partial lines still buffered. ev locates the end (the last event).
func (c *Correlator) End(ev *bundle.Event) {
	for _, id := range slices.Sorted(maps.Keys(c.conns)) {
		c.endAll(c.conns[id], ev, OutcomeUnknown, c.conns[id].endReason("the bundle ended"))
	}
}

// OpenCalls returns the calls still open, ordered by request seq.
func (c *Correlator) OpenCalls() []*Call {
	var out []*Call
	for _, w := range c.conns {
		for _, call := range w.calls {
			out = append(out, call)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RequestSeq < out[j].RequestSeq })
	return out
}

func (c *Correlator) endAll(w *wsConn, ev *bundle.Event, outcome Outcome, why string) {
	c.flushPartial(w, ev, why)
	c.endCalls(w, ev, outcome, why)
}

// flushPartial reports partial lines that can no longer complete.
func (c *Correlator) flushPartial(w *wsConn, ev *bundle.Event, why string) {
	for i := range w.dirs {
		d := &w.dirs[i]
		if len(d.buf) > 0 && w.rpc {
			err := fmt.Errorf("incomplete message left when %s (started at seq %d)", why, d.bufSeq)
			if d.framing != framingNDJSON {
				// No ndjson line ever ended on this side: what it sent was
				// never the start of one, just not JSON ("hello").
				err = d.notJSON(why)
			}
			c.emit(&Step{Seq: ev.Seq, T: ev.T, Conn: w.id, Err: err, Raw: d.buf})
		}
		d.buf = nil
	}
}

// endCalls ends the open calls of w, in request order. A call the client
// interrupted that is cut off (outcome unknown) ends as interrupted, at the
// client's close of the socket if it closed first (the server had until its
// own close to answer, and did not), else here.
func (c *Correlator) endCalls(w *wsConn, ev *bundle.Event, outcome Outcome, why string) {
	calls := make([]*Call, 0, len(w.calls))
	for _, call := range w.calls {
		calls = append(calls, call)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].RequestSeq < calls[j].RequestSeq })
	for _, call := range calls {
		call.Outcome, call.EndSeq, call.Reason = outcome, ev.Seq, why
		if call.Interrupted && outcome == OutcomeUnknown {
			call.Outcome, call.Reason = OutcomeInterrupted, "the client interrupted it and no Exit came before "+why
			if w.clientClosed != "" {
				call.EndSeq = w.clientCloseSeq
			}
		}
		delete(w.calls, call.ID)
		w.remember(call.ID, outcome)
		c.emit(&Step{Seq: ev.Seq, T: ev.T, Conn: w.id, Call: call, Ended: true})
	}
}

// notJSON is the error for the bytes buffered on a side where no ndjson
// line ever ended: they were not JSON, and never became a line before why.
func (d *dirState) notJSON(why string) error {
	return fmt.Errorf("not an RPC message: what was sent from seq %d on (%d bytes) is not JSON, and no newline ended it as an ndjson line before %s", d.bufSeq, len(d.buf), why)
}

// frame splits one ws.message into messages according to the direction's framing.
func (c *Correlator) frame(ev *bundle.Event) {
	w := c.conn(ev.Conn)
	d := &w.dirs[dirIndex(ev.Dir)]
	data := ev.Body.Data
	if len(d.buf) > 0 && d.framing != framingNDJSON && jsonscan.Valid(data) {
		// What is buffered never became an ndjson line, and this message
		// is JSON whole: the buffered bytes were no line's start but junk
		// ("hello"), which must not swallow the messages after it (a stray
		// Exit after it went unseen).
		if w.rpc {
			c.emit(&Step{Seq: ev.Seq, T: ev.T, Conn: w.id, Err: d.notJSON(fmt.Sprintf("a whole JSON message came (seq %d)", ev.Seq)), Raw: d.buf})
		}
		d.buf = nil
	}
	if len(d.buf) == 0 && d.framing != framingNDJSON {
		msgs, err := c.decode(data)
		if err == nil {
			if d.framing == framingUnknown {
				d.framing = framingJSON
				if bytes.IndexByte(bytes.TrimRight(data, "\r\n"), '\n') >= 0 {
					d.framing = framingNDJSON
				}
			}
			w.rpc = true
			for i := range msgs {
				c.message(w, ev, &msgs[i])
			}
			return
		}
		if d.framing == framingJSON || jsonscan.Valid(data) {
			c.decodeError(w, ev, err, data)
			return
		}
	}
	// Line framing: buffer and cut complete lines.
	if len(d.buf) == 0 {
		d.bufSeq = ev.Seq
	}
	d.buf = append(d.buf, data...)
	for {
		i := bytes.IndexByte(d.buf, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimSpace(d.buf[:i])
		rest := d.buf[i+1:]
		if len(line) > 0 {
			msgs, err := c.decode(line)
			if err != nil {
				c.decodeError(w, ev, err, line)
			} else {
				d.framing = framingNDJSON
				w.rpc = true
				for j := range msgs {
					c.message(w, ev, &msgs[j])
				}
			}
		}
		d.buf = rest
		d.bufSeq = ev.Seq
	}
	if len(d.buf) == 0 {
		d.buf = nil
	} else if len(d.buf) > c.maxLine {
		c.decodeError(w, ev, fmt.Errorf("ndjson line longer than %d bytes (started at seq %d)", c.maxLine, d.bufSeq), d.buf[:256])
		d.buf = nil
	} else {
		d.buf = append([]byte(nil), d.buf...) // do not keep the event's body alive
	}
}

// decode splits a frame (or an ndjson line) into messages. The messages and
// their raw fields are valid until the next call: they alias the frame and a
// buffer reused per frame.
func (c *Correlator) decode(frame []byte) ([]Message, error) {
	clear(c.msgs)
	msgs, err := decodeMessages(c.lean, frame, c.msgs[:0])
	c.msgs = msgs
	return msgs, err
}

func (c *Correlator) decodeError(w *wsConn, ev *bundle.Event, err error, raw []byte) {
	if !w.rpc {
		return // not (yet) known to be an RPC socket: its frames are not ours to judge
	}
	c.emit(&Step{Seq: ev.Seq, T: ev.T, Conn: w.id, Dir: ev.Dir, Err: err, Raw: raw})
}

// crossedEnding reports whether a message for a call that already ended is
// one that legitimately crossed that ending on the wire: the client's
// Interrupt or Ack sent before it saw the Exit, or the server's Chunk or Exit
// recorded after the socket closed or the call was cut. A Chunk or Exit after
// the call's own Exit is still an error.
func crossedEnding(tag string, dir bundle.Dir, how Outcome) bool {
	switch tag {
	case TagInterrupt, TagAck:
		return dir == bundle.DirClientToServer
	case TagChunk, TagExit:
		return dir == bundle.DirServerToClient && (how == OutcomeUnknown || how == OutcomeDefect || how == OutcomeInterrupted)
	}
	return false
}

// errNoCall reports a message for an id with no open call.
var errNoCall = errors.New("no open call with this id")

func (c *Correlator) message(w *wsConn, ev *bundle.Event, m *Message) {
	out := Step{Seq: ev.Seq, T: ev.T, Conn: w.id, Dir: ev.Dir, Message: m}
	id := m.Key()
	switch m.Tag {
	case TagRequest:
		if _, dup := w.calls[id]; dup {
			out.Err = fmt.Errorf("request id %s: %w", id, ErrReused)
			break
		}
		call := &Call{Conn: w.id, ID: id, Method: m.Method, RequestSeq: ev.Seq, Outcome: OutcomeOpen}
		if tid, ok := c.lean.threadID(m.Payload); ok {
			call.ThreadID = tid
		} else {
			var p struct {
				ThreadID string `json:"threadId"`
			}
			if json.Unmarshal(m.Payload, &p) == nil {
				call.ThreadID = p.ThreadID
			}
		}
		w.calls[id] = call
		out.Call = call
	case TagChunk, TagAck, TagInterrupt, TagExit:
		call := w.calls[id]
		if call == nil {
			if how, ok := w.ended[id]; ok && crossedEnding(m.Tag, ev.Dir, how) {
				break
			}
			out.Err = fmt.Errorf("%s for id %s: %w", m.Tag, id, errNoCall)
			break
		}
		out.Call = call
		switch m.Tag {
		case TagChunk:
			call.Chunks++
		case TagAck:
			call.Acks++
		case TagInterrupt:
			call.Interrupted = true
		case TagExit:
			call.Exit, call.EndSeq, out.Ended = m.Exit, ev.Seq, true
			call.Outcome = OutcomeSuccess
			if m.Exit.Tag == ExitFailure {
				call.Outcome = OutcomeFailure
				cause, err := DecodeCause(m.Exit.Cause)
				if err != nil {
					call.Reason = "undecodable cause: " + err.Error()
				}
				call.Cause = &cause
			}
			delete(w.calls, id)
			w.remember(id, call.Outcome)
		}
	case TagDefect:
		c.emit(&out)
		c.endCalls(w, ev, OutcomeDefect, "connection defect: "+clip(m.Defect, 200))
		return
	}
	c.emit(&out)
}

// ErrReused marks a Request whose id is in flight (Step.Err).
var ErrReused = errors.New("request id reused while its call is open")
