package anthropic

import (
	"encoding/json"
	"fmt"
)

// Kinds of StreamError.
const (
	// ProblemMalformed: an event's data is not a JSON event object of its
	// own type, or a block's pieces do not fit it (a tool's input that is
	// not JSON, a delta of another block type).
	ProblemMalformed = "malformed"
	// ProblemOrder: an event where the grammar has no place for it.
	ProblemOrder = "order"
)

// StreamError is one way a stream breaks the event grammar.
type StreamError struct {
	Kind  string // ProblemMalformed or ProblemOrder
	Event string // the event's name
	Msg   string
}

func (e *StreamError) Error() string { return e.Event + ": " + e.Msg }

// Assembler reads a streamed answer's events back into one message and
// judges their order against the API's grammar:
//
//	message_start (content_block_start content_block_delta* content_block_stop)* message_delta+ message_stop
//
// with ping anywhere, blocks indexed 0, 1, ... one at a time, each delta of
// its block's type, and an error event ending the stream. It goes on after
// a problem, so one bad event is reported once. Event types it does not
// know are skipped, as the API asks clients to.
type Assembler struct {
	msg     *Response
	open    int    // the open block's index, -1 for none
	input   []byte // the open tool_use block's input JSON so far
	deltas  int    // message_delta events seen
	stopped bool   // message_stop seen
	apiErr  *ErrorBody
	events  int
}

// NewAssembler returns an assembler awaiting message_start.
func NewAssembler() *Assembler { return &Assembler{open: -1} }

// Message is the message assembled so far (nil before message_start).
func (a *Assembler) Message() *Response { return a.msg }

// Complete reports whether message_stop was seen.
func (a *Assembler) Complete() bool { return a.stopped }

// APIError is the error an error event carried (nil if none).
func (a *Assembler) APIError() *ErrorBody { return a.apiErr }

// Events is the number of events fed.
func (a *Assembler) Events() int { return a.events }

func malformed(name, format string, args ...any) *StreamError {
	return &StreamError{Kind: ProblemMalformed, Event: name, Msg: fmt.Sprintf(format, args...)}
}

func order(name, format string, args ...any) *StreamError {
	return &StreamError{Kind: ProblemOrder, Event: name, Msg: fmt.Sprintf(format, args...)}
}

// Feed takes the next event (its SSE name, "message" when it had none, and
// its data) and returns the problem it has, if any (a *StreamError).
func (a *Assembler) Feed(name string, data []byte) error {
	a.events++
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return malformed(name, "data is not a JSON event: %v", err)
	}
	if name == "" || name == "message" {
		name = ev.Type
	}
	if ev.Type != name {
		return malformed(name, "the event named %q carries data of type %q", name, ev.Type)
	}
	if name == EventPing {
		return nil
	}
	if a.stopped || a.apiErr != nil {
		end := EventMessageStop
		if a.apiErr != nil {
			end = EventError
		}
		return order(name, "an event after %s", end)
	}
	switch name {
	case EventError:
		if ev.Error == nil {
			return malformed(name, "an error event without an error object")
		}
		e := *ev.Error
		a.apiErr = &e
		return nil
	case EventMessageStart:
		if a.msg != nil {
			return order(name, "a second message_start")
		}
		if ev.Message == nil {
			return malformed(name, "message_start without a message")
		}
		m := *ev.Message
		a.msg = &m
		if len(m.Content) > 0 {
			return malformed(name, "message_start carries %d content blocks (the API starts with none)", len(m.Content))
		}
		return nil
	case EventContentBlockStart, EventContentBlockDelta, EventContentBlockStop, EventMessageDelta, EventMessageStop:
		if a.msg == nil {
			return order(name, "%s before message_start", name)
		}
	default:
		return nil // a type the API may add
	}
	switch name {
	case EventContentBlockStart:
		if ev.Index == nil || ev.ContentBlock == nil {
			return malformed(name, "content_block_start without an index or a content_block")
		}
		if a.open >= 0 {
			return order(name, "block %d starts while block %d is open", *ev.Index, a.open)
		}
		if a.deltas > 0 {
			return order(name, "block %d starts after message_delta", *ev.Index)
		}
		if *ev.Index != len(a.msg.Content) {
			return order(name, "block index %d, expected %d", *ev.Index, len(a.msg.Content))
		}
		b := *ev.ContentBlock
		a.msg.Content = append(a.msg.Content, b)
		a.open, a.input = *ev.Index, nil
	case EventContentBlockDelta:
		if ev.Index == nil || ev.Delta == nil {
			return malformed(name, "content_block_delta without an index or a delta")
		}
		if a.open < 0 || *ev.Index != a.open {
			return order(name, "a delta for block %d, which is not open", *ev.Index)
		}
		b := &a.msg.Content[a.open]
		d := ev.Delta
		switch {
		case d.Type == DeltaText && b.Type == BlockText:
			b.Text += d.Text
		case d.Type == DeltaInputJSON && (b.Type == BlockToolUse || b.Type == "server_tool_use"):
			a.input = append(a.input, d.PartialJSON...)
		case d.Type == DeltaThinking && b.Type == BlockThinking:
			b.Thinking += d.Thinking
		case d.Type == DeltaSignature && b.Type == BlockThinking:
			b.Signature += d.Signature
		default:
			return malformed(name, "a %s delta for a %s block", d.Type, b.Type)
		}
	case EventContentBlockStop:
		if ev.Index == nil {
			return malformed(name, "content_block_stop without an index")
		}
		if a.open < 0 || *ev.Index != a.open {
			return order(name, "a stop for block %d, which is not open", *ev.Index)
		}
		b := &a.msg.Content[a.open]
		a.open = -1
		if b.Type == BlockToolUse || b.Type == "server_tool_use" {
			if len(a.input) > 0 {
				b.Input = json.RawMessage(a.input)
			}
			if len(b.Input) == 0 {
				b.Input = json.RawMessage("{}")
			}
			a.input = nil
			if !json.Valid(b.Input) {
				return malformed(name, "the input of tool_use %s (%s) is not JSON: %.80q", b.ID, b.Name, b.Input)
			}
		}
	case EventMessageDelta:
		if ev.Delta == nil {
			return malformed(name, "message_delta without a delta")
		}
		if a.open >= 0 {
			return order(name, "message_delta while block %d is open", a.open)
		}
		a.deltas++
		if ev.Delta.StopReason != "" {
			a.msg.StopReason = ev.Delta.StopReason
		}
		if ev.Delta.StopSequence != nil {
			a.msg.StopSequence = ev.Delta.StopSequence
		}
		if u := ev.Usage; u != nil { // cumulative: what it says replaces message_start's
			a.msg.Usage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 {
				a.msg.Usage.InputTokens = u.InputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				a.msg.Usage.CacheCreationInputTokens = u.CacheCreationInputTokens
			}
			if u.CacheReadInputTokens > 0 {
				a.msg.Usage.CacheReadInputTokens = u.CacheReadInputTokens
			}
		}
	case EventMessageStop:
		if a.open >= 0 {
			return order(name, "message_stop while block %d is open", a.open)
		}
		if a.deltas == 0 {
			return order(name, "message_stop without a message_delta (no stop_reason)")
		}
		a.stopped = true
	}
	return nil
}
