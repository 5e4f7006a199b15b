package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/t3"
)

// Message is one decoded RPC message, whatever its framing (Effect json,
// ndjson, JSON-RPC 2.0): the same fields as t3.RPCMessage, with the request id
// reduced to its key (7 and "7" are the same id).
type Message struct {
	Tag     string          // t3.Tag* (Request, Chunk, Exit, Ack, Interrupt, Ping, Pong, Eof, Defect)
	ID      string          // Request: the id's key; Ack, Interrupt, Chunk, Exit: the requestId's key
	Method  string          // Request
	Payload json.RawMessage // Request
	Values  json.RawMessage // Chunk: a JSON array of stream items
	Exit    *t3.Exit        // Exit
	Defect  json.RawMessage // Defect
}

// wireMessage covers the keys of both the Effect and the JSON-RPC 2.0 framings,
// so one decode pass serves both.
type wireMessage struct {
	Tag       string          `json:"_tag"`
	ID        t3.RequestID    `json:"id"`
	RPCTag    string          `json:"tag"`
	Payload   json.RawMessage `json:"payload"`
	RequestID t3.RequestID    `json:"requestId"`
	Values    json.RawMessage `json:"values"`
	Exit      *t3.Exit        `json:"exit"`
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
// framing are accepted too. The raw fields of the messages (payload, values,
// exit value and cause, defect) alias frame.
func DecodeMessages(frame []byte) ([]Message, error) {
	return decodeMessages(nil, frame, nil)
}

// decodeMessages is DecodeMessages with the lean decoder d (nil: a fresh one),
// appending to out.
func decodeMessages(d *leanDecoder, frame []byte, out []Message) ([]Message, error) {
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
	s := newScanner(b)
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

func decodeMessage(d *leanDecoder, b []byte) (Message, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		if json.Valid(b) {
			return Message{}, ErrNotRPC
		}
		return Message{}, errors.New("invalid JSON")
	}
	if d == nil {
		d = &leanDecoder{}
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
	case t3.TagRequest:
		if len(w.ID) == 0 {
			return m, errors.New("Request without id")
		}
		m.ID, m.Method, m.Payload = w.ID.Key(), w.RPCTag, w.Payload
	case t3.TagAck, t3.TagInterrupt:
		if len(w.RequestID) == 0 {
			return m, fmt.Errorf("%s without requestId", w.Tag)
		}
		m.ID = w.RequestID.Key()
	case t3.TagChunk:
		if len(w.RequestID) == 0 {
			return m, errors.New("Chunk without requestId")
		}
		m.ID, m.Values = w.RequestID.Key(), w.Values
	case t3.TagExit:
		if len(w.RequestID) == 0 || w.Exit == nil {
			return m, errors.New("Exit without requestId or exit")
		}
		if w.Exit.Tag != t3.ExitSuccess && w.Exit.Tag != t3.ExitFailure {
			return m, fmt.Errorf("Exit with unknown exit tag %q", w.Exit.Tag)
		}
		m.ID, m.Exit = w.RequestID.Key(), w.Exit
	case t3.TagDefect:
		m.Defect = w.Defect
	case t3.TagPing, t3.TagPong, t3.TagEof:
	case "":
		return m, ErrNotRPC
	default:
		return m, fmt.Errorf("unknown message tag %q", w.Tag)
	}
	return m, nil
}

// jsonRPCControl maps the control methods of the JSON-RPC framing to tags.
var jsonRPCControl = map[string]string{
	"@effect/rpc/Ack":       t3.TagAck,
	"@effect/rpc/Interrupt": t3.TagInterrupt,
	"@effect/rpc/Ping":      t3.TagPing,
	"@effect/rpc/Pong":      t3.TagPong,
	"@effect/rpc/Eof":       t3.TagEof,
	"@effect/rpc/Defect":    t3.TagDefect,
}

// fromJSONRPC maps a JSON-RPC 2.0 message onto the Effect tags.
func fromJSONRPC(w *wireMessage) (Message, error) {
	if tag, ok := jsonRPCControl[w.Method]; ok {
		m := Message{Tag: tag}
		switch tag {
		case t3.TagAck, t3.TagInterrupt:
			var p struct {
				RequestID t3.RequestID `json:"requestId"`
			}
			if err := json.Unmarshal(w.Params, &p); err != nil || len(p.RequestID) == 0 {
				return m, fmt.Errorf("JSON-RPC %s without params.requestId", w.Method)
			}
			m.ID = p.RequestID.Key()
		case t3.TagDefect:
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
		return Message{Tag: t3.TagRequest, ID: w.ID.Key(), Method: w.Method, Payload: w.Params}, nil
	}
	if len(w.ID) == 0 {
		return Message{}, errors.New("JSON-RPC response without id")
	}
	id := w.ID.Key()
	switch {
	case w.Chunk:
		return Message{Tag: t3.TagChunk, ID: id, Values: w.Result}, nil
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
		return Message{Tag: t3.TagExit, ID: id, Exit: &t3.Exit{Tag: t3.ExitFailure, Cause: cause}}, nil
	default:
		return Message{Tag: t3.TagExit, ID: id, Exit: &t3.Exit{Tag: t3.ExitSuccess, Value: w.Result}}, nil
	}
}
