package openai

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/wireproof/wireproof/model/anthropic"
)

// Kinds of StreamError: the Messages API's (malformed: an event's data is
// not a JSON event of its own type, or a call's arguments are not JSON;
// order: an event where the grammar has no place for it).
const (
	ProblemMalformed = anthropic.ProblemMalformed
	ProblemOrder     = anthropic.ProblemOrder
)

// StreamError is one way a stream breaks the event grammar (the Messages
// API's type).
type StreamError = anthropic.StreamError

// Assembler reads a streamed response's events back into the response and
// judges them against the grammar Events writes: response.created first;
// each output item added at the next index, its deltas and done events
// while it is open, closed by output_item.done; response.completed (or
// failed, incomplete) last. An error event ends the stream. It goes on
// after a problem, so one bad event is reported once. Event types it does
// not know are skipped, as clients do.
type Assembler struct {
	resp    *Response
	open    map[int]*Item // items added and not done
	next    int           // the next output index
	args    map[int]string
	text    map[int]string
	ended   string // the terminal event's type, "" while open
	apiErr  *ErrorBody
	events  int
	created bool
}

// NewAssembler returns an assembler awaiting response.created.
func NewAssembler() *Assembler {
	return &Assembler{open: map[int]*Item{}, args: map[int]string{}, text: map[int]string{}}
}

// Response is the response assembled so far (nil before response.created).
func (a *Assembler) Response() *Response { return a.resp }

// Complete reports whether response.completed was seen.
func (a *Assembler) Complete() bool { return a.ended == EventCompleted }

// Ended is the terminal event seen (response.completed, response.failed,
// response.incomplete, error), "" if none.
func (a *Assembler) Ended() string { return a.ended }

// APIError is the error an error or response.failed event carried.
func (a *Assembler) APIError() *ErrorBody { return a.apiErr }

// Events is the number of events fed.
func (a *Assembler) Events() int { return a.events }

func order(name, format string, args ...any) *StreamError {
	return &StreamError{Kind: ProblemOrder, Event: name, Msg: fmt.Sprintf(format, args...)}
}

// Feed takes one event (its name, and its data) and returns the problem it
// has, nil if none.
func (a *Assembler) Feed(name string, data []byte) *StreamError {
	a.events++
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return &StreamError{Kind: ProblemMalformed, Event: name, Msg: "data is not a JSON event: " + err.Error()}
	}
	if name == "message" {
		name = ev.Type // a stream without event: lines names each by its data
	}
	if ev.Type != name {
		return &StreamError{Kind: ProblemMalformed, Event: name, Msg: fmt.Sprintf("data has type %q, not the event's name", ev.Type)}
	}
	if a.ended != "" {
		return order(name, "after %s ended the stream", a.ended)
	}
	if name == EventError {
		a.ended = name
		a.apiErr = &ErrorBody{Type: ev.Code, Message: ev.Message}
		if ev.Error != nil {
			a.apiErr = ev.Error
		}
		return nil
	}
	if !a.created && name != EventCreated {
		// Reported once: the stream goes on as if it had been created.
		a.created, a.resp = true, &Response{}
		if p := a.feedEvent(name, ev); p != nil {
			return p
		}
		return order(name, "before response.created")
	}
	return a.feedEvent(name, ev)
}

func (a *Assembler) feedEvent(name string, ev Event) *StreamError {
	idx := -1
	if ev.OutputIndex != nil {
		idx = *ev.OutputIndex
	}
	switch name {
	case EventCreated:
		if a.created {
			return order(name, "a second response.created")
		}
		if ev.Response == nil {
			return &StreamError{Kind: ProblemMalformed, Event: name, Msg: "no response"}
		}
		a.created = true
		r := *ev.Response
		r.Output = nil
		a.resp = &r
	case EventInProgress:
	case EventOutputItemAdded:
		if ev.Item == nil {
			return &StreamError{Kind: ProblemMalformed, Event: name, Msg: "no item"}
		}
		if idx != a.next {
			return order(name, "output_index %d, expected %d", idx, a.next)
		}
		it := *ev.Item
		a.open[idx] = &it
		a.next++
	case EventContentPartAdded, EventContentPartDone, EventOutputTextDelta, EventOutputTextDone, EventArgumentsDelta, EventArgumentsDone:
		it, ok := a.open[idx]
		if !ok {
			return order(name, "for output_index %d, which is not open", idx)
		}
		text := name == EventContentPartAdded || name == EventContentPartDone || name == EventOutputTextDelta || name == EventOutputTextDone
		if text != (it.Type == ItemMessage) {
			return order(name, "on a %s item", it.Type)
		}
		switch name {
		case EventOutputTextDelta:
			a.text[idx] += ev.Delta
		case EventArgumentsDelta:
			a.args[idx] += ev.Delta
		}
	case EventOutputItemDone:
		it, ok := a.open[idx]
		if !ok {
			return order(name, "for output_index %d, which is not open", idx)
		}
		delete(a.open, idx)
		if ev.Item == nil {
			return &StreamError{Kind: ProblemMalformed, Event: name, Msg: "no item"}
		}
		done := *ev.Item
		if done.Type != it.Type {
			return order(name, "a %s item closed as %s", it.Type, done.Type)
		}
		a.resp.Output = append(a.resp.Output, done)
		if done.Type == ItemFunctionCall {
			if done.Arguments == "" {
				done.Arguments = a.args[idx]
			}
			if done.Arguments != "" && !json.Valid([]byte(done.Arguments)) {
				return &StreamError{Kind: ProblemMalformed, Event: name, Msg: "function call " + done.Name + ": arguments are not JSON"}
			}
		}
	case EventCompleted, EventFailed, EventIncomplete:
		a.ended = name
		if len(a.open) > 0 {
			return order(name, "with %d output items still open", len(a.open))
		}
		if ev.Response != nil {
			if ev.Response.Error != nil {
				a.apiErr = ev.Response.Error
			}
			out := a.resp.Output
			r := *ev.Response
			if len(r.Output) == 0 {
				r.Output = out
			}
			a.resp = &r
		}
	}
	return nil
}

// Assemble reads a whole stream body and returns the assembler and every
// problem, in order.
func Assemble(r io.Reader) (*Assembler, []*StreamError, error) {
	a := NewAssembler()
	var problems []*StreamError
	err := anthropic.ReadEvents(r, func(name string, data []byte) error {
		if p := a.Feed(name, data); p != nil {
			problems = append(problems, p)
		}
		return nil
	})
	return a, problems, err
}
