// Package protocol turns the events of a bundle into protocol events: the
// calls of a connection with their request, chunks, acknowledgements,
// interrupts and end; notifications; closes; and what could not be decoded.
// Each protocol has a Decoder; a Router gives every connection to the decoder
// of what it carries. Checks (see replay's conformance suite) and tools
// (playback, triage) read the protocol events instead of the raw frames.
//
// The package knows JSON-RPC 2.0 (over stdio lines and WebSocket text frames),
// HTTP exchanges (server-sent events as messages; JSON-RPC carried over
// HTTP, as MCP's Streamable HTTP transport does; Anthropic's Messages API,
// a Claude CLI's calls of its model), and the Claude CLI's stream-json
// (stdio lines of a provider process), and the Codex CLI's app-server
// (JSON-RPC without the "jsonrpc" member, its turns and items followed as
// calls: codex.go). Effect RPC is decoded
// by protocol/effectrpc's Correlator, which the engine plugs in as a decoder.
package protocol

import (
	"encoding/json"

	"github.com/wireproof/wireproof/bundle"
)

// Name names a protocol.
type Name string

// The protocols decoded.
const (
	EffectRPC Name = "effect-rpc" // Effect RPC, json or ndjson framing (effectrpc.Correlator)
	JSONRPC   Name = "jsonrpc"    // JSON-RPC 2.0
	HTTP      Name = "http"       // HTTP/1.1 exchanges; text/event-stream bodies as messages
	// StreamJSON is the Claude CLI's stream-json: one JSON object per stdio
	// line, the SDK on stdin (DirClientToServer), the CLI on stdout.
	StreamJSON Name = "stream-json"
	// Anthropic is Anthropic's Messages API: the Claude CLI's model calls,
	// decoded from their HTTP exchanges (anthropic.go).
	Anthropic Name = "anthropic"
	// OpenAI is OpenAI's Responses API: the Codex CLI's model calls,
	// decoded from their HTTP exchanges (responses.go) into the same
	// ModelCall facts as Anthropic's.
	OpenAI Name = "openai"
)

// Kind is what a protocol event is.
type Kind uint8

// Protocol event kinds.
const (
	KindRequest      Kind = iota + 1 // a call began
	KindChunk                        // one stream chunk of a call
	KindAck                          // the client acknowledged a chunk
	KindInterrupt                    // the client asked to stop a call
	KindResponse                     // the message that ends a call (Exit, JSON-RPC response, HTTP response)
	KindNotification                 // a message outside any call (JSON-RPC notification, SSE event, ping)
	KindEnd                          // a call ended without an answer (connection closed, server stopped, bundle ended)
	KindClose                        // a connection closed
	KindDecodeError                  // a frame, line or body that could not be decoded (Err, Raw)
)

var kindNames = [...]string{"", "request", "chunk", "ack", "interrupt", "response", "notification", "end", "close", "decode-error"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Outcome is how a call ended.
type Outcome string

// Call outcomes.
const (
	OutcomeOpen        Outcome = "open"
	OutcomeSuccess     Outcome = "success"     // a result / Exit Success / HTTP response
	OutcomeFailure     Outcome = "failure"     // an error / Exit Failure
	OutcomeInterrupted Outcome = "interrupted" // the client interrupted it and its connection closed before an answer
	OutcomeUnknown     Outcome = "unknown"     // cut off: connection closed, server stopped, bundle ended
)

// Call is one call of a connection, from its request to what ended it.
type Call struct {
	Protocol Name
	// Dialect is the JSON-RPC dialect of its connection ("": JSON-RPC 2.0;
	// DialectCodex).
	Dialect     Dialect
	Conn        string
	ID          string     // the id's key: 7 and "7" differ for JSON-RPC, not for Effect
	Method      string     // the RPC method, or the HTTP method and path
	Dir         bundle.Dir // the direction the request travelled
	RequestSeq  uint64
	Chunks      int
	Acks        int
	Interrupted bool
	Outcome     Outcome
	EndSeq      uint64
}

// Event is one protocol event. Fields not meaningful for its Kind are zero.
// The event and its raw slices are valid only during the emit call.
type Event struct {
	Seq      uint64
	T        int64
	Conn     string
	Dir      bundle.Dir
	Protocol Name
	Kind     Kind
	// Dialect (JSON-RPC): the dialect its connection speaks, whose rules
	// judged it ("": JSON-RPC 2.0; DialectCodex: the Codex app-server's).
	Dialect Dialect

	ID     string          // the request id's key, for calls
	RawID  json.RawMessage // the id as on the wire (JSON-RPC)
	Method string          // Request, Notification
	Call   *Call           // the call it belongs to; nil for a response to no open call
	Body   json.RawMessage // the message as on the wire

	// Reused: a Request whose id is already in flight in the same direction.
	Reused bool
	// Late: a message for a call that already ended which legitimately
	// crossed that ending on the wire (a client's Interrupt sent before it saw
	// the Exit; an answer recorded after the connection was cut).
	Late bool
	// Invalid lists how the message breaks its protocol's envelope rules
	// (JSON-RPC 2.0: version, id type, error object, result xor error).
	Invalid []string

	// ClosedBy (End): the side whose close frame was recorded first on the
	// call's connection, if a close ended the call.
	ClosedBy bundle.Dir
	// Why (End): what ended the call without an answer: a Router's Stop
	// (the server stopped, the bundle ended), the exit of a stdio channel's
	// process, the completion of a Codex item's turn.
	Why string
	// Unanswered (End): the peer that owed the answer ended without giving
	// it: a Codex app-server exited on its own (not by a signal) with the
	// request, of either side, still open.
	Unanswered bool

	// Close: the close code (0: none was sent) and whether the connection
	// ended abnormally (no close frame).
	Code     int
	Abnormal bool
	// HTTP Response: the status (also on the answer a JSON-RPC call over
	// HTTP got as an HTTP error, and on its end), the declared Content-Length (-1: none) and
	// the body bytes recorded; BodyCut says the recording of the body was cut
	// short (truncated, or the exchange ended with an error), so its length
	// cannot be judged.
	Status   int
	Declared int64
	Actual   int64
	BodyCut  bool
	// Truncated (HTTP Response): the recorder kept only the start of the
	// body (its cap). BodyTooBig: a body the decoder was asked to keep
	// (HTTPOptions.Keep; then in Body) was larger than its MaxBody.
	Truncated  bool
	BodyTooBig bool

	// Model (Protocol Anthropic, Request, Response and End): what the
	// model call's request and answer hold.
	Model *ModelCall

	Err error
	Raw []byte
}

// Emit receives protocol events in seq order.
type Emit func(*Event)

// Decoder turns the bundle events of the connections routed to it into
// protocol events.
type Decoder interface {
	// Feed takes the next bundle event of a connection routed to the
	// decoder: for a stdio channel also the proc.start of its process
	// (before its first line) and its proc.exit. A decoder ignores the
	// kinds it does not read.
	Feed(ev *bundle.Event, emit Emit)
	// Stop ends the calls still open on every connection of the decoder with
	// an unknown outcome: why says what happened (the server stopped, the
	// bundle ended); at locates it.
	Stop(at *bundle.Event, why string, emit Emit)
}
