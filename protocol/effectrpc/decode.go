package effectrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/internal/jsonscan"
)

// wireMessage covers the keys of both the Effect and the JSON-RPC 2.0
// framings that the decoders read, so one decode pass serves both.
type wireMessage struct {
	Tag       string          `json:"_tag"`
	ID        RequestID       `json:"id"`
	RPCTag    string          `json:"tag"`
	Payload   json.RawMessage `json:"payload"`
	RequestID RequestID       `json:"requestId"`
	Values    json.RawMessage `json:"values"`
	Exit      *Exit           `json:"exit"`
	Defect    json.RawMessage `json:"defect"`

	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Chunk   bool            `json:"chunk"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// ErrNotRPC is returned for a well-formed JSON value that is not an RPC message.
var ErrNotRPC = errors.New("not an RPC message")

// DecodeMessages decodes one complete Effect json frame: a JSON object is one
// message, a JSON array one message per element. Messages in the JSON-RPC 2.0
// framing are accepted too, mapped onto the Effect tags. The raw fields of the
// messages (ids, payload, values, exit value and cause, defect) alias frame.
// The decoded fields are those the decoders read: a Request's tracing fields
// and headers are not kept.
func DecodeMessages(frame []byte) ([]Message, error) {
	return decodeMessages(nil, frame, nil)
}

// decodeMessages is DecodeMessages with the lean decoder d (nil: a fresh one),
// appending to out.
func decodeMessages(d *lean, frame []byte, out []Message) ([]Message, error) {
	b := bytes.TrimSpace(frame)
	if len(b) == 0 {
		return out, errors.New("empty frame")
	}
	if b[0] != '[' {
		m, err := decodeMessage(d, b)
		if err != nil {
			return out, err
		}
		return append(out, m), nil
	}
	elems, ok := arrayElements(b)
	if !ok {
		elems = nil // never decode into slices that alias b
		if err := json.Unmarshal(b, &elems); err != nil {
			return out, fmt.Errorf("array frame: %w", err)
		}
	}
	for i, e := range elems {
		m, err := decodeMessage(d, e)
		if err != nil {
			return out, fmt.Errorf("array frame element %d: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// arrayElements splits a JSON array into its elements without copying them,
// or reports that encoding/json must (the array is not valid, for one).
func arrayElements(b []byte) ([]json.RawMessage, bool) {
	s := jsonscan.NewReader(b)
	elems := []json.RawMessage{}
	ok := s.Array(0, func() bool {
		v, ok := s.Raw(1)
		elems = append(elems, v)
		return ok
	})
	return elems, ok && s.End()
}

// DecodeMessage decodes one RPC message (one JSON object). The raw fields of
// the message alias b.
func DecodeMessage(b []byte) (Message, error) { return decodeMessage(nil, b) }

func decodeMessage(d *lean, b []byte) (Message, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		if jsonscan.Valid(b) {
			return Message{}, ErrNotRPC
		}
		return Message{}, errors.New("invalid JSON")
	}
	if d == nil {
		d = &lean{}
	}
	var w wireMessage
	if !d.message(b, &w) {
		// Not decodable the lean way (invalid, or a shape it leaves to
		// encoding/json): decode as encoding/json does, errors included.
		w = wireMessage{}
		if err := json.Unmarshal(b, &w); err != nil {
			return Message{}, err
		}
	}
	if w.JSONRPC != "" || (w.Tag == "" && (w.Method != "" || w.Result != nil || w.Error != nil)) {
		return fromJSONRPC(&w)
	}
	m := Message{Tag: w.Tag}
	switch w.Tag {
	case TagRequest:
		if len(w.ID) == 0 {
			return m, errors.New("Request without id")
		}
		m.ID, m.Method, m.Payload = w.ID, w.RPCTag, w.Payload
	case TagAck, TagInterrupt:
		if len(w.RequestID) == 0 {
			return m, fmt.Errorf("%s without requestId", w.Tag)
		}
		m.RequestID = w.RequestID
	case TagChunk:
		if len(w.RequestID) == 0 {
			return m, errors.New("Chunk without requestId")
		}
		m.RequestID, m.Values = w.RequestID, w.Values
	case TagExit:
		if len(w.RequestID) == 0 || w.Exit == nil {
			return m, errors.New("Exit without requestId or exit")
		}
		if w.Exit.Tag != ExitSuccess && w.Exit.Tag != ExitFailure {
			return m, fmt.Errorf("Exit with unknown exit tag %q", w.Exit.Tag)
		}
		m.RequestID, m.Exit = w.RequestID, w.Exit
	case TagDefect:
		m.Defect = w.Defect
	case TagPing, TagPong, TagEof:
	case "":
		return m, ErrNotRPC
	default:
		return m, fmt.Errorf("unknown message tag %q", w.Tag)
	}
	return m, nil
}

// jsonRPCControl maps the control methods of the JSON-RPC framing to tags.
var jsonRPCControl = map[string]string{
	"@effect/rpc/Ack":       TagAck,
	"@effect/rpc/Interrupt": TagInterrupt,
	"@effect/rpc/Ping":      TagPing,
	"@effect/rpc/Pong":      TagPong,
	"@effect/rpc/Eof":       TagEof,
	"@effect/rpc/Defect":    TagDefect,
}

// fromJSONRPC maps a JSON-RPC 2.0 message onto the Effect tags.
func fromJSONRPC(w *wireMessage) (Message, error) {
	if tag, ok := jsonRPCControl[w.Method]; ok {
		m := Message{Tag: tag}
		switch tag {
		case TagAck, TagInterrupt:
			var p struct {
				RequestID RequestID `json:"requestId"`
			}
			if err := json.Unmarshal(w.Params, &p); err != nil || len(p.RequestID) == 0 {
				return m, fmt.Errorf("JSON-RPC %s without params.requestId", w.Method)
			}
			m.RequestID = p.RequestID
		case TagDefect:
			m.Defect = w.Params
		}
		return m, nil
	}
	if w.Method != "" {
		if strings.HasPrefix(w.Method, "@effect/rpc/") {
			return Message{}, fmt.Errorf("unknown JSON-RPC control method %q", w.Method)
		}
		if len(w.ID) == 0 {
			return Message{}, fmt.Errorf("JSON-RPC request %q without id", w.Method)
		}
		return Message{Tag: TagRequest, ID: w.ID, Method: w.Method, Payload: w.Params}, nil
	}
	if len(w.ID) == 0 {
		return Message{}, errors.New("JSON-RPC response without id")
	}
	id := w.ID
	switch {
	case w.Chunk:
		return Message{Tag: TagChunk, RequestID: id, Values: w.Result}, nil
	case w.Error != nil:
		var e struct {
			Data json.RawMessage `json:"data"`
		}
		var cause json.RawMessage
		if json.Unmarshal(w.Error, &e) == nil && len(e.Data) > 0 && e.Data[0] == '[' {
			cause = e.Data
		} else {
			cause = json.RawMessage(`[{"_tag":"Fail","error":` + string(w.Error) + `}]`)
		}
		return Message{Tag: TagExit, RequestID: id, Exit: &Exit{Tag: ExitFailure, Cause: cause}}, nil
	default:
		return Message{Tag: TagExit, RequestID: id, Exit: &Exit{Tag: ExitSuccess, Value: w.Result}}, nil
	}
}
