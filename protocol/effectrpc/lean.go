package effectrpc

// The lean decoder reads an RPC message in one strict pass without
// reflection and copies nothing: its raw fields alias the frame. It either
// produces exactly what encoding/json would for the fields it fills, or
// reports that it cannot, and the caller decodes with encoding/json as
// before: messages and decode errors never depend on which path ran.
// lean_test.go checks the equivalence, by table and by fuzzing.

import "github.com/wireproof/wireproof/internal/jsonscan"

// lean holds the intern table of one stream. Not safe for concurrent use.
type lean struct {
	intern jsonscan.Intern
	// known, if set, returns the length of a JSON object or array that rest
	// starts with and that the caller has validated before, byte for byte
	// (Options.KnownValue), or 0.
	known func(rest []byte) int
}

func newLean(known func([]byte) int) *lean { return &lean{intern: jsonscan.Intern{}, known: known} }

// message decodes one RPC message object into w. Its raw fields (ids,
// payload, values, exit value and cause, defect, params, result, error) alias
// b, where encoding/json would copy them.
func (d *lean) message(b []byte, w *wireMessage) bool {
	s := jsonscan.NewReader(b)
	var seen jsonscan.Keys
	ok := s.Fields(0, func(key []byte) bool {
		switch string(key) {
		case "_tag":
			return seen.First(0) && s.Text(&w.Tag, d.intern)
		case "id":
			return seen.First(1) && s.RawInto((*[]byte)(&w.ID), 1)
		case "tag":
			return seen.First(2) && s.Text(&w.RPCTag, d.intern)
		case "payload":
			return seen.First(3) && s.RawInto((*[]byte)(&w.Payload), 1)
		case "requestId":
			return seen.First(4) && s.RawInto((*[]byte)(&w.RequestID), 1)
		case "values":
			return seen.First(5) && s.RawInto((*[]byte)(&w.Values), 1)
		case "exit":
			return seen.First(6) && d.exit(&s, &w.Exit)
		case "defect":
			return seen.First(7) && s.RawInto((*[]byte)(&w.Defect), 1)
		case "jsonrpc":
			return seen.First(8) && s.Text(&w.JSONRPC, d.intern)
		case "method":
			return seen.First(9) && s.Text(&w.Method, d.intern)
		case "params":
			return seen.First(10) && s.RawInto((*[]byte)(&w.Params), 1)
		case "chunk":
			return seen.First(11) && s.BoolInto(&w.Chunk)
		case "result":
			return seen.First(12) && s.RawInto((*[]byte)(&w.Result), 1)
		case "error":
			return seen.First(13) && s.RawInto((*[]byte)(&w.Error), 1)
		}
		return s.SkipUnknown(1, key, "_tag", "id", "tag", "payload", "requestId", "values", "exit", "defect",
			"jsonrpc", "method", "params", "chunk", "result", "error")
	})
	return ok && s.End()
}

// exit decodes an Exit's exit object. Its value is only validated here: a
// reader decodes it if it reads it.
func (d *lean) exit(s *jsonscan.Reader, dst **Exit) bool {
	if s.Null() {
		return true
	}
	x := &Exit{}
	var seen jsonscan.Keys
	ok := s.Fields(1, func(key []byte) bool {
		switch string(key) {
		case "_tag":
			return seen.First(0) && s.Text(&x.Tag, d.intern)
		case "value":
			return seen.First(1) && d.exitValue(s, (*[]byte)(&x.Value))
		case "cause":
			return seen.First(2) && s.RawInto((*[]byte)(&x.Cause), 2)
		}
		return s.SkipUnknown(2, key, "_tag", "value", "cause")
	})
	*dst = x
	return ok
}

// ExitValueDepth is the nesting depth of an Exit's value in a message: a
// value given to Options.KnownValue must have been validated at this depth,
// so that it is valid where it stands.
const ExitValueDepth = 2

// exitValue scans an Exit's value (at ExitValueDepth) into *dst. A value
// the caller knows, byte for byte (Options.KnownValue: a long run answers
// the same projection over and over), is taken by a memcmp instead of
// scanned again: a JSON object or array ends at its own closing bracket.
func (d *lean) exitValue(s *jsonscan.Reader, dst *[]byte) bool {
	s.Space()
	if d.known != nil {
		if n := d.known(s.Rest()); n > 0 {
			start := s.Pos()
			s.Seek(start + n)
			*dst = s.Since(start)
			return true
		}
	}
	return s.RawInto(dst, ExitValueDepth)
}

// threadID reads payload.threadId of a request, as decoding the payload into
// struct{ThreadID string `json:"threadId"`} does.
func (d *lean) threadID(payload []byte) (string, bool) {
	s := jsonscan.NewReader(payload)
	var id string
	if s.Null() {
		return "", s.End()
	}
	var seen jsonscan.Keys
	ok := s.Fields(0, func(key []byte) bool {
		if string(key) == "threadId" {
			return seen.First(0) && s.Text(&id, d.intern)
		}
		return s.SkipUnknown(1, key, "threadId")
	})
	return id, ok && s.End()
}
