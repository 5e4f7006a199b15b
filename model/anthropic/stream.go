package anthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"
)

// Stream event types (each is also the SSE event name).
const (
	EventMessageStart      = "message_start"
	EventContentBlockStart = "content_block_start"
	EventContentBlockDelta = "content_block_delta"
	EventContentBlockStop  = "content_block_stop"
	EventMessageDelta      = "message_delta"
	EventMessageStop       = "message_stop"
	EventPing              = "ping"
	EventError             = "error"
)

// Delta types of content_block_delta.
const (
	DeltaText      = "text_delta"
	DeltaInputJSON = "input_json_delta"
	DeltaThinking  = "thinking_delta"
	DeltaSignature = "signature_delta"
)

// Event is one event of a streamed answer. Which fields mean something
// depends on Type; Index is a pointer because index 0 is written.
type Event struct {
	Type         string     `json:"type"`
	Message      *Response  `json:"message,omitempty"`       // message_start
	Index        *int       `json:"index,omitempty"`         // content_block_*
	ContentBlock *Block     `json:"content_block,omitempty"` // content_block_start
	Delta        *Delta     `json:"delta,omitempty"`         // content_block_delta, message_delta
	Usage        *Usage     `json:"usage,omitempty"`         // message_delta
	Error        *ErrorBody `json:"error,omitempty"`         // error
}

// Delta is a content_block_delta's delta (Type set) or a message_delta's
// (Type "", StopReason set).
type Delta struct {
	Type         string     `json:"type,omitempty"`
	Text         string     `json:"text,omitempty"`
	PartialJSON  string     `json:"partial_json,omitempty"`
	Thinking     string     `json:"thinking,omitempty"`
	Signature    string     `json:"signature,omitempty"`
	StopReason   StopReason `json:"stop_reason,omitempty"`
	StopSequence *string    `json:"stop_sequence,omitempty"`
}

// MarshalJSON writes the fields of the delta's type, empty strings included.
func (d Delta) MarshalJSON() ([]byte, error) {
	switch d.Type {
	case DeltaText:
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{d.Type, d.Text})
	case DeltaInputJSON:
		return json.Marshal(struct {
			Type        string `json:"type"`
			PartialJSON string `json:"partial_json"`
		}{d.Type, d.PartialJSON})
	case "":
		return json.Marshal(struct {
			StopReason   StopReason `json:"stop_reason"`
			StopSequence *string    `json:"stop_sequence"`
		}{d.StopReason, d.StopSequence})
	}
	type plain Delta
	return json.Marshal(plain(d))
}

// StreamOptions shape how a message is cut into events. Nil means defaults.
type StreamOptions struct {
	// Chunk is the most runes of text (or bytes of a tool's input JSON) one
	// delta carries; 0 means 32.
	Chunk int
	// NoPing leaves out the ping the API sends after message_start.
	NoPing bool
}

// Events returns the events that stream r as the API does: message_start
// (no content, no stop reason, the input usage), a ping, each block as
// content_block_start, its deltas (text_delta, input_json_delta) and
// content_block_stop, then message_delta (the stop reason, the usage) and
// message_stop.
func Events(r *Response, o *StreamOptions) []Event {
	chunk := 32
	ping := true
	if o != nil {
		if o.Chunk > 0 {
			chunk = o.Chunk
		}
		ping = !o.NoPing
	}
	start := *r
	start.Content = []Block{}
	start.StopReason, start.StopSequence = "", nil
	start.Usage.OutputTokens = min(r.Usage.OutputTokens, 1)
	evs := []Event{{Type: EventMessageStart, Message: &start}}
	if ping {
		evs = append(evs, Event{Type: EventPing})
	}
	for i, b := range r.Content {
		idx := i
		head := b
		var deltas []Delta
		switch b.Type {
		case BlockText:
			head.Text = ""
			for _, s := range splitRunes(b.Text, chunk) {
				deltas = append(deltas, Delta{Type: DeltaText, Text: s})
			}
		case BlockToolUse:
			head.Input = json.RawMessage("{}")
			in := string(b.Input)
			if in == "" {
				in = "{}"
			}
			deltas = append(deltas, Delta{Type: DeltaInputJSON, PartialJSON: ""})
			for len(in) > 0 {
				n := min(chunk, len(in))
				for n < len(in) && !utf8.RuneStart(in[n]) {
					n++
				}
				deltas = append(deltas, Delta{Type: DeltaInputJSON, PartialJSON: in[:n]})
				in = in[n:]
			}
		}
		evs = append(evs, Event{Type: EventContentBlockStart, Index: &idx, ContentBlock: &head})
		for k := range deltas {
			evs = append(evs, Event{Type: EventContentBlockDelta, Index: &idx, Delta: &deltas[k]})
		}
		evs = append(evs, Event{Type: EventContentBlockStop, Index: &idx})
	}
	u := r.Usage // the API's message_delta carries the whole usage, cumulative
	evs = append(evs, Event{Type: EventMessageDelta, Delta: &Delta{StopReason: r.StopReason, StopSequence: r.StopSequence}, Usage: &u},
		Event{Type: EventMessageStop})
	return evs
}

// splitRunes cuts s into pieces of at most n runes (one empty piece for "").
func splitRunes(s string, n int) []string {
	if s == "" {
		return []string{""}
	}
	var out []string
	for len(s) > 0 {
		i, k := 0, 0
		for i < len(s) && k < n {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
			k++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// StreamWriter writes server-sent events, flushing each one when the
// writer is an http.Flusher. The first write error sticks.
type StreamWriter struct {
	w   io.Writer
	f   http.Flusher
	err error
}

// NewStreamWriter returns a writer of events to w.
func NewStreamWriter(w io.Writer) *StreamWriter {
	f, _ := w.(http.Flusher)
	return &StreamWriter{w: w, f: f}
}

// Write writes ev as `event: <type>` and its JSON as the data line.
func (s *StreamWriter) Write(ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding a %s event: %w", ev.Type, err)
	}
	return s.WriteRaw(ev.Type, b)
}

// WriteRaw writes one event named name with data as its one data line
// (data must hold no newline).
func (s *StreamWriter) WriteRaw(name string, data []byte) error {
	if s.err != nil {
		return s.err
	}
	buf := make([]byte, 0, len(name)+len(data)+16)
	buf = append(append(append(buf, "event: "...), name...), "\ndata: "...)
	buf = append(append(buf, data...), "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		s.err = err
		return err
	}
	if s.f != nil {
		s.f.Flush()
	}
	return nil
}

// Err is the first write error.
func (s *StreamWriter) Err() error { return s.err }
