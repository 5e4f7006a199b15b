package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Stream event types (the event's name and its data's "type").
const (
	EventCreated              = "response.created"
	EventInProgress           = "response.in_progress"
	EventOutputItemAdded      = "response.output_item.added"
	EventOutputItemDone       = "response.output_item.done"
	EventContentPartAdded     = "response.content_part.added"
	EventContentPartDone      = "response.content_part.done"
	EventOutputTextDelta      = "response.output_text.delta"
	EventOutputTextDone       = "response.output_text.done"
	EventArgumentsDelta       = "response.function_call_arguments.delta"
	EventArgumentsDone        = "response.function_call_arguments.done"
	EventCompleted            = "response.completed"
	EventFailed               = "response.failed"
	EventIncomplete           = "response.incomplete"
	EventError                = "error"
	defaultDeltaBytes     int = 24
)

// Event is one stream event: its type and its data object.
type Event struct {
	Type           string     `json:"type"`
	SequenceNumber int        `json:"sequence_number"`
	Response       *Response  `json:"response,omitempty"`
	OutputIndex    *int       `json:"output_index,omitempty"`
	ContentIndex   *int       `json:"content_index,omitempty"`
	ItemID         string     `json:"item_id,omitempty"`
	Item           *Item      `json:"item,omitempty"`
	Part           *Part      `json:"part,omitempty"`
	Delta          string     `json:"delta,omitempty"`
	Text           string     `json:"text,omitempty"`
	Arguments      string     `json:"arguments,omitempty"`
	Code           string     `json:"code,omitempty"`
	Message        string     `json:"message,omitempty"`
	Error          *ErrorBody `json:"error,omitempty"`
}

// StreamOptions shape a written stream. Nil means defaults.
type StreamOptions struct {
	// DeltaBytes splits text and arguments into deltas of at most this
	// many bytes (0: 24).
	DeltaBytes int
}

func intp(n int) *int { return &n }

// Events is the stream that answers resp, in the API's grammar:
//
//	response.created response.in_progress
//	(output_item.added [content_part.added output_text.delta* output_text.done content_part.done | function_call_arguments.delta* function_call_arguments.done] output_item.done)*
//	response.completed
//
// response.created carries resp in progress with no output;
// response.completed carries resp whole.
func Events(resp *Response, opts *StreamOptions) []Event {
	size := defaultDeltaBytes
	if opts != nil && opts.DeltaBytes > 0 {
		size = opts.DeltaBytes
	}
	start := *resp
	start.Status, start.Output, start.Usage = StatusInProgress, []Item{}, nil
	evs := []Event{{Type: EventCreated, Response: &start}, {Type: EventInProgress, Response: &start}}
	for i, it := range resp.Output {
		added := it
		added.Status = StatusInProgress
		switch it.Type {
		case ItemMessage:
			added.Content = Content{}
		case ItemFunctionCall:
			added.Arguments = ""
		}
		evs = append(evs, Event{Type: EventOutputItemAdded, OutputIndex: intp(i), Item: &added})
		switch it.Type {
		case ItemMessage:
			for k, p := range it.Content {
				empty := Part{Type: p.Type, Text: "", Annotations: []json.RawMessage{}}
				evs = append(evs, Event{Type: EventContentPartAdded, ItemID: it.ID, OutputIndex: intp(i), ContentIndex: intp(k), Part: &empty})
				for _, d := range chunks(p.Text, size) {
					evs = append(evs, Event{Type: EventOutputTextDelta, ItemID: it.ID, OutputIndex: intp(i), ContentIndex: intp(k), Delta: d})
				}
				done := p
				evs = append(evs, Event{Type: EventOutputTextDone, ItemID: it.ID, OutputIndex: intp(i), ContentIndex: intp(k), Text: p.Text},
					Event{Type: EventContentPartDone, ItemID: it.ID, OutputIndex: intp(i), ContentIndex: intp(k), Part: &done})
			}
		case ItemFunctionCall:
			for _, d := range chunks(it.Arguments, size) {
				evs = append(evs, Event{Type: EventArgumentsDelta, ItemID: it.ID, OutputIndex: intp(i), Delta: d})
			}
			evs = append(evs, Event{Type: EventArgumentsDone, ItemID: it.ID, OutputIndex: intp(i), Arguments: it.Arguments})
		}
		done := it
		evs = append(evs, Event{Type: EventOutputItemDone, OutputIndex: intp(i), Item: &done})
	}
	evs = append(evs, Event{Type: EventCompleted, Response: resp})
	for k := range evs {
		evs[k].SequenceNumber = k
	}
	return evs
}

// chunks splits s into pieces of at most n bytes, not splitting a UTF-8
// sequence (none for "").
func chunks(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && k > 0 && s[k]&0xC0 == 0x80 {
			k--
		}
		if k == 0 {
			k = min(n, len(s))
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// StreamWriter writes events to a response as server-sent events
// (event: <type>, data: <json>), flushing after each.
type StreamWriter struct {
	w io.Writer
}

// NewStreamWriter writes to w (flushed after each event when it is an
// http.Flusher).
func NewStreamWriter(w io.Writer) *StreamWriter { return &StreamWriter{w: w} }

// Write writes one event.
func (s *StreamWriter) Write(ev Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return s.WriteRaw(ev.Type, b)
}

// WriteRaw writes an event with data as given (a malformed event, for a
// fault).
func (s *StreamWriter) WriteRaw(name string, data []byte) error {
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return err
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}
