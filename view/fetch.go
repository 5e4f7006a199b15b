package view

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/t3"
)

// MaxDetailBody caps the bytes of one payload the details API returns.
const MaxDetailBody = 256 << 10

// Payload is a body for display: JSON (shown as a tree), text, or binary as
// a hex dump.
type Payload struct {
	Encoding  string          `json:"encoding"` // json, text or hex
	JSON      json.RawMessage `json:"json,omitempty"`
	Text      string          `json:"text,omitempty"`
	Size      int             `json:"size"`
	Truncated bool            `json:"truncated,omitempty"`
}

// EventDetail is one event in full (its payload capped at MaxDetailBody).
type EventDetail struct {
	Event
	Type      string          `json:"type,omitempty"`
	Name      string          `json:"name,omitempty"`
	Method    string          `json:"method,omitempty"`
	URL       string          `json:"url,omitempty"`
	Status    int             `json:"status,omitempty"`
	Code      int             `json:"code,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Header    http.Header     `json:"header,omitempty"`
	Attrs     json.RawMessage `json:"attrs,omitempty"`
	Size      int64           `json:"size,omitempty"`
	Truncated bool            `json:"truncated,omitempty"`
	Err       string          `json:"err,omitempty"`
	Body      *Payload        `json:"body,omitempty"`
}

// CallDetail is one RPC call with its messages' contents.
type CallDetail struct {
	CallSpan
	Payload *Payload `json:"payload,omitempty"` // the Request's payload
	Exit    *Payload `json:"exit,omitempty"`    // the Exit message's exit
	// Fails, Dies and Interrupts are the failure's cause, flattened (every
	// typed error and defect in full).
	Fails      []json.RawMessage `json:"fails,omitempty"`
	Dies       []json.RawMessage `json:"dies,omitempty"`
	Interrupts []string          `json:"interrupts,omitempty"`
	// Chunks are the first chunks' values.
	Chunks []ChunkDetail `json:"chunkValues,omitempty"`
}

// ChunkDetail is one Chunk message of a streaming call.
type ChunkDetail struct {
	Seq    uint64   `json:"seq"`
	T      int64    `json:"t"`
	Values *Payload `json:"values"`
}

// maxChunkDetails caps the chunks a call's details carry.
const maxChunkDetails = 50

func payloadOf(data []byte, binary bool) *Payload {
	if data == nil {
		return nil
	}
	p := &Payload{Size: len(data)}
	if len(data) > MaxDetailBody {
		data, p.Truncated = data[:MaxDetailBody], true
	}
	switch {
	case binary || !utf8.Valid(data):
		p.Encoding, p.Text = "hex", hex.Dump(data)
	case !p.Truncated && json.Valid(data):
		p.Encoding, p.JSON = "json", json.RawMessage(data)
	default:
		p.Encoding, p.Text = "text", string(data)
	}
	return p
}

// scan streams the bundle's events in seq order up to and including seq last,
// decoding payloads only where want says so; fn returns false to stop.
func scan(ctx context.Context, path string, last uint64, want func(seq uint64, k bundle.Kind) bool, fn func(ev *bundle.Event) bool) error {
	var next uint64 = 1 // the seq the reader decodes next (the header is seq 0)
	r, err := bundle.Open(path, &bundle.ReaderOptions{SkipBody: func(k bundle.Kind) bool { return !want(next, k) }})
	if err != nil {
		return err
	}
	defer r.Close()
	return each(ctx, r, func(ev *bundle.Event) bool {
		next = ev.Seq + 1
		return fn(ev) && ev.Seq < last
	})
}

// each hands r's events to fn in order until fn returns false or the stream
// ends, checking ctx as it goes.
func each(ctx context.Context, r *bundle.Reader, fn func(ev *bundle.Event) bool) error {
	for ev, err := range r.Events(ctx) {
		if err != nil {
			return err
		}
		if !fn(ev) {
			return nil
		}
	}
	return nil
}

// readEvent reads the event at seq in full.
func readEvent(ctx context.Context, path string, e Event) (*EventDetail, error) {
	d := &EventDetail{Event: e}
	if e.Seq == 0 {
		r, err := bundle.Open(path, nil)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		h, _ := json.Marshal(r.Header())
		d.Body = payloadOf(h, false)
		return d, nil
	}
	found := false
	err := scan(ctx, path, e.Seq, func(seq uint64, _ bundle.Kind) bool { return seq == e.Seq }, func(ev *bundle.Event) bool {
		if ev.Seq != e.Seq {
			return true
		}
		found = true
		d.Type, d.Name, d.Method, d.URL, d.Status, d.Code, d.Reason = ev.Type, ev.Name, ev.Method, ev.URL, ev.Status, ev.Code, ev.Reason
		d.Header, d.Attrs, d.Size, d.Truncated, d.Err = ev.Header, append(json.RawMessage(nil), ev.Attrs...), ev.Size, ev.Truncated, ev.Err
		d.Body = payloadOf(append([]byte(nil), ev.Body.Data...), ev.Body.Binary)
		return false
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("seq %d is not in the bundle", e.Seq)
	}
	return d, nil
}

// readMessageCall reads a JSON-RPC or stream-json call's two messages: the
// request at its seq (a stdio line, a WebSocket message, an HTTP body) as
// Payload, and the answer as Exit: the message at its end seq, or, where the
// call ends with its exchange (http.end), the last message the other side
// sent on the call's connection before it. A Codex turn or item (protocol
// codex) is its started and its completed notification.
func readMessageCall(ctx context.Context, path string, c CallSpan) (*CallDetail, error) {
	d := &CallDetail{CallSpan: c}
	last := max(c.Seq, c.EndSeq)
	codex := protocol.Name(c.Protocol) == protocol.Codex
	inRange := func(seq uint64) bool { return seq == c.Seq || c.EndSeq != 0 && seq > c.Seq && seq <= c.EndSeq }
	var reqDir bundle.Dir
	// A stdio line the recorder cut at its cap is decoded at its last
	// piece: the pieces before it (of its connection and direction) are
	// read in a second pass and put before it.
	held := map[bundle.Dir][]uint64{}
	var payload, exit kept
	err := scan(ctx, path, last, func(seq uint64, _ bundle.Kind) bool { return inRange(seq) }, func(ev *bundle.Event) bool {
		before := held[ev.Dir]
		if ev.Kind == bundle.KindStdioLine && ev.Conn == c.Conn {
			if bytes.Contains(ev.Attrs, []byte(`"partial":true`)) {
				held[ev.Dir] = append(before, ev.Seq)
			} else {
				delete(held, ev.Dir)
			}
		}
		switch {
		case ev.Seq == c.Seq:
			reqDir = ev.Dir
			payload = keep(ev, before)
		case codex && ev.Seq == c.EndSeq && ev.Conn == c.Conn && len(ev.Body.Data) > 0:
			// A Codex turn or item: both ends are the app-server's
			// notifications (turn/completed, item/completed).
			exit = keep(ev, before)
		case !codex && inRange(ev.Seq) && ev.Conn == c.Conn && ev.Dir != reqDir && len(ev.Body.Data) > 0:
			exit = keep(ev, before)
		}
		return ev.Seq < last
	})
	if err == nil {
		err = readPieces(ctx, path, &payload, &exit)
	}
	if err != nil {
		return nil, err
	}
	d.Payload, d.Exit = payload.payload(), exit.payload()
	return d, nil
}

// kept is a message readMessageCall shows: its body, after the bodies of
// the pieces before it of a line the recorder cut (pieces, by seq, until
// readPieces fills start).
type kept struct {
	body   *bundle.Payload
	pieces []uint64
	start  []byte
}

func keep(ev *bundle.Event, pieces []uint64) kept {
	return kept{body: &bundle.Payload{Data: append([]byte(nil), ev.Body.Data...), Binary: ev.Body.Binary}, pieces: slices.Clone(pieces)}
}

func (k kept) payload() *Payload {
	if k.body == nil {
		return nil
	}
	return payloadOf(append(k.start, k.body.Data...), k.body.Binary)
}

// readPieces reads the bodies of the messages' earlier pieces, if any.
func readPieces(ctx context.Context, path string, ks ...*kept) error {
	want := map[uint64][]*kept{}
	var last uint64
	for _, k := range ks {
		for _, seq := range k.pieces {
			want[seq] = append(want[seq], k)
			last = max(last, seq)
		}
	}
	if len(want) == 0 {
		return nil
	}
	return scan(ctx, path, last, func(seq uint64, _ bundle.Kind) bool { return want[seq] != nil }, func(ev *bundle.Event) bool {
		for _, k := range want[ev.Seq] {
			k.start = append(k.start, ev.Body.Data...)
		}
		return true
	})
}

// readCall re-reads the WebSocket traffic of the call's connection up to the
// call's end and keeps the call's messages: the correlator that decodes them
// is replay's, so the details say what replay saw.
func readCall(ctx context.Context, path string, c CallSpan) (*CallDetail, error) {
	if isModelProtocol(protocol.Name(c.Protocol)) {
		return readModelCall(ctx, path, c)
	}
	if c.Protocol != "" {
		return readMessageCall(ctx, path, c)
	}
	d := &CallDetail{CallSpan: c}
	last := c.EndSeq
	if last == 0 {
		last = ^uint64(0)
	}
	corr := effectrpc.NewCorrelator(func(r *effectrpc.Step) {
		if r.Call == nil || r.Call.RequestSeq != c.Seq || r.Call.ID != c.ID || r.Message == nil {
			return
		}
		m := r.Message
		switch m.Tag {
		case effectrpc.TagRequest:
			d.Payload = payloadOf(append([]byte(nil), m.Payload...), false)
		case effectrpc.TagChunk:
			if len(d.Chunks) < maxChunkDetails {
				d.Chunks = append(d.Chunks, ChunkDetail{Seq: r.Seq, T: r.T, Values: payloadOf(append([]byte(nil), m.Values...), false)})
			}
		case effectrpc.TagExit:
			if m.Exit != nil {
				b, _ := json.Marshal(m.Exit)
				d.Exit = payloadOf(b, false)
				if m.Exit.Tag == effectrpc.ExitFailure {
					if cause, err := effectrpc.DecodeCause(m.Exit.Cause); err == nil {
						for _, f := range cause.Fails {
							d.Fails = append(d.Fails, append(json.RawMessage(nil), f...))
						}
						for _, x := range cause.Dies {
							d.Dies = append(d.Dies, append(json.RawMessage(nil), x...))
						}
						d.Interrupts = cause.Interrupts
					}
				}
			}
		}
	}, &effectrpc.Options{Path: t3.PathWebSocket})
	wsKind := func(k bundle.Kind) bool {
		return k == bundle.KindWSOpen || k == bundle.KindWSMessage || k == bundle.KindWSClose
	}
	err := scan(ctx, path, last, func(_ uint64, k bundle.Kind) bool { return k == bundle.KindWSMessage }, func(ev *bundle.Event) bool {
		if wsKind(ev.Kind) && ev.Conn == c.Conn {
			corr.Feed(ev)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}
