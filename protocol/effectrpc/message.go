// Package effectrpc is Effect RPC's wire model and its decoders, the one
// definition that the T3 client (t3), the fixture server, playback and the
// judge (replay) share: the messages of the json serialization (ndjson is
// the same, one per line), their tags and ids, Exit and its causes; the
// decoding of a frame into messages (Effect json, array frames and Effect's
// JSON-RPC 2.0 serialization, one strict pass that encoding/json backs); and
// the Correlator, which rebuilds the calls of a recorded WebSocket.
package effectrpc

import (
	"encoding/json"
	"strconv"
)

// Effect RPC message tags (json serialization).
const (
	TagRequest   = "Request"
	TagAck       = "Ack"
	TagInterrupt = "Interrupt"
	TagPing      = "Ping"
	TagPong      = "Pong"
	TagEof       = "Eof"
	TagChunk     = "Chunk"
	TagExit      = "Exit"
	TagDefect    = "Defect"

	ExitSuccess = "Success"
	ExitFailure = "Failure"

	CauseFail      = "Fail"
	CauseDie       = "Die"
	CauseInterrupt = "Interrupt"
)

// RequestID is an Effect RPC request id. Effect sends decimal strings in older
// versions and numbers in newer ones, and servers echo the JSON type they got;
// RequestID keeps the raw JSON token so it can be echoed exactly, and compares by
// its decimal text.
type RequestID json.RawMessage

// NumberID returns the numeric id n as Effect v4 (beta.96 and later) sends it.
func NumberID(n uint64) RequestID { return RequestID(strconv.AppendUint(nil, n, 10)) }

// StringID returns the id n as a decimal JSON string, as older Effect sends it.
func StringID(n uint64) RequestID {
	return RequestID(strconv.AppendQuote(nil, strconv.FormatUint(n, 10)))
}

// Key is the decimal text of the id, the same for 7 and "7".
func (id RequestID) Key() string {
	if len(id) >= 2 && id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return s
		}
	}
	return string(id)
}

// MarshalJSON writes the id exactly as it was received.
func (id RequestID) MarshalJSON() ([]byte, error) {
	if len(id) == 0 {
		return []byte("null"), nil
	}
	return id, nil
}

// UnmarshalJSON keeps the raw token.
func (id *RequestID) UnmarshalJSON(b []byte) error {
	*id = append((*id)[:0], b...)
	return nil
}

// Message is any Effect RPC message in json serialization. Only the fields
// of its Tag are set. Marshal it with MarshalJSON, which writes the key order
// the Effect client and server use and always includes a Request's headers.
// Decoded (DecodeMessage), its raw fields alias the frame, and a message of
// the JSON-RPC serialization is mapped onto the same fields.
type Message struct {
	Tag       string          `json:"_tag"`
	ID        RequestID       `json:"id,omitempty"`        // Request
	Method    string          `json:"tag,omitempty"`       // Request
	Payload   json.RawMessage `json:"payload,omitempty"`   // Request
	TraceID   string          `json:"traceId,omitempty"`   // Request
	SpanID    string          `json:"spanId,omitempty"`    // Request
	Sampled   *bool           `json:"sampled,omitempty"`   // Request
	Headers   json.RawMessage `json:"headers,omitempty"`   // Request: a JSON array of [name, value] pairs (always written, [] when empty); nil when the message had none
	RequestID RequestID       `json:"requestId,omitempty"` // Ack, Interrupt, Chunk, Exit
	Values    json.RawMessage `json:"values,omitempty"`    // Chunk: a JSON array
	Exit      *Exit           `json:"exit,omitempty"`      // Exit
	Defect    json.RawMessage `json:"defect,omitempty"`    // Defect
}

// Exit is the end of an RPC call or stream.
type Exit struct {
	Tag   string          `json:"_tag"`            // Success or Failure
	Value json.RawMessage `json:"value,omitempty"` // Success; null for a stream's end
	Cause json.RawMessage `json:"cause,omitempty"` // Failure: v4 flat array or v3 tree
}

// CauseItem is one element of a v4 flat cause.
type CauseItem struct {
	Tag     string          `json:"_tag"` // Fail, Die or Interrupt
	Error   json.RawMessage `json:"error,omitempty"`
	Defect  json.RawMessage `json:"defect,omitempty"`
	FiberID json.RawMessage `json:"fiberId,omitempty"`
}

// MarshalJSON writes m with the key order of Effect's own encoder. A Request
// always carries "headers" (an Effect server closes the socket on a Request
// without them).
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message // no methods: the default encoding
	if m.Tag != TagRequest {
		return json.Marshal(plain(m))
	}
	headers := m.Headers
	if len(headers) == 0 {
		headers = json.RawMessage("[]")
	}
	payload := m.Payload
	if len(payload) == 0 {
		payload = json.RawMessage("null")
	}
	return json.Marshal(struct {
		Tag     string          `json:"_tag"`
		ID      RequestID       `json:"id"`
		Method  string          `json:"tag"`
		Payload json.RawMessage `json:"payload"`
		TraceID string          `json:"traceId,omitempty"`
		SpanID  string          `json:"spanId,omitempty"`
		Sampled *bool           `json:"sampled,omitempty"`
		Headers json.RawMessage `json:"headers"`
	}{m.Tag, m.ID, m.Method, payload, m.TraceID, m.SpanID, m.Sampled, headers})
}

// Key is the key of the id the message is about: a Request's id, the
// requestId of an Ack, Interrupt, Chunk or Exit; "" for the others.
func (m *Message) Key() string {
	if m.Tag == TagRequest {
		return m.ID.Key()
	}
	return m.RequestID.Key()
}
