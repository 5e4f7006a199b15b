// Package bundle defines wireproof's evidence format: an event envelope and a
// streaming zstd-compressed NDJSON Writer and Reader. The format is specified in
// docs/bundle-format.md; this file is the envelope every other package speaks.
package bundle

import (
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"
)

// FormatVersion is the bundle format this package writes. Readers refuse a
// bundle whose header names a newer version.
const FormatVersion = 2

// Kind says what an event records. Kinds are dotted: the part before the dot is
// the channel family (http, ws, gate, proc, stdio), which lets a reader skip whole
// families without decoding their bodies.
type Kind string

// The event kinds of format version 1. Fields used by each kind are listed with
// it; fields not listed are empty.
const (
	// KindHeader is line 1 of every bundle (seq 0, t 0). Body is the Header as JSON.
	KindHeader Kind = "header"

	// KindHTTPRequest: Conn (exchange id "h<N>"), Method, URL (path and query as
	// the client sent them, redacted), Header. The request body follows as
	// KindHTTPBody events with Dir DirClientToServer.
	KindHTTPRequest Kind = "http.request"
	// KindHTTPResponse: Conn, Status, Header. Body chunks follow with Dir
	// DirServerToClient, each at its arrival time.
	KindHTTPResponse Kind = "http.response"
	// KindHTTPBody: Conn, Dir, Body (one chunk as read from the wire).
	KindHTTPBody Kind = "http.body"
	// KindHTTPEnd ends an exchange: Conn, Size (response body bytes relayed),
	// Truncated (the recorded body stopped at the cap), Err (why it ended early).
	KindHTTPEnd Kind = "http.end"

	// KindWSOpen: Conn ("ws<N>"), URL, Header (the client's upgrade request,
	// redacted), Name (the negotiated subprotocol), Attrs {"clientCompressed":bool,
	// "upstreamCompressed":bool}.
	KindWSOpen Kind = "ws.open"
	// KindWSMessage: Conn, Dir, Type (TypeText or TypeBinary), Body (the whole
	// decompressed message; Truncated and Size, the message's full size, when
	// it was longer than the recording limit), Err (a compressed message that
	// could not be decompressed, recorded as it came).
	KindWSMessage Kind = "ws.message"
	// KindWSClose: Conn, Dir (the side whose close frame or end it records),
	// Code and Reason (of its close frame, 1005 for one without a code), or
	// Code 1006 and Err for a stream that ended without a close frame (a
	// connection lost). A connection normally has two, one per side, each
	// recorded when it crossed the proxy; one without Dir (1001) records that
	// the proxy stopped and closed both sides.
	KindWSClose Kind = "ws.close"
	// KindWSPing and KindWSPong: Conn, Dir (the side that sent it), Body (its
	// payload, possibly empty). The proxy relays them; it never answers one.
	KindWSPing Kind = "ws.ping"
	KindWSPong Kind = "ws.pong"
	// KindWSError: Conn, Dir, Err: a side sent bytes that are not a
	// WebSocket frame. They and everything after them in that direction are
	// relayed but not recorded.
	KindWSError Kind = "ws.error"

	// KindGateRequest: Conn (the gate's name, "gate"), Method, URL, Header.
	KindGateRequest Kind = "gate.request"
	// KindGateRelease: Conn, URL (the request released), Status, Body.
	KindGateRelease Kind = "gate.release"

	// KindProcStart: Conn (the process name, "server"), Attrs {"argv":[...],
	// "pid":N, "dir":"..."}.
	KindProcStart Kind = "proc.start"
	// KindProcReady: Conn, Body (the log line that signalled readiness).
	KindProcReady Kind = "proc.ready"
	// KindProcSignal: Conn, Name (the signal sent, "SIGTERM").
	KindProcSignal Kind = "proc.signal"
	// KindProcExit: Conn, Code (exit status, -1 when killed by a signal), Name
	// (the signal that killed it, if any), Err.
	KindProcExit Kind = "proc.exit"
	// KindProcLog: Conn, Type (TypeStdout or TypeStderr), Body (one line, without
	// its newline, redacted).
	KindProcLog Kind = "proc.log"

	// KindStdioLine: Conn (the tap's name), Dir, Body (one NDJSON line without its
	// newline).
	KindStdioLine Kind = "stdio.line"

	// KindArtifact: Name (a file name such as "prompt.txt"), Body.
	KindArtifact Kind = "artifact"
	// KindMark: Name (what happened, such as "run" or "phase"), Body (JSON facts).
	KindMark Kind = "mark"
	// KindVerdict: Body is the verdict the live run reached, as JSON.
	KindVerdict Kind = "verdict"
	// KindTrailer is the last line of a cleanly closed bundle. Body is the Trailer.
	KindTrailer Kind = "trailer"
)

// Dir is the direction of a message or body chunk.
type Dir string

const (
	DirClientToServer Dir = "c2s"
	DirServerToClient Dir = "s2c"
)

// Message and stream types carried in Event.Type.
const (
	TypeText   = "text"
	TypeBinary = "binary"
	TypeStdout = "stdout"
	TypeStderr = "stderr"
)

// Event is one line of a bundle. Seq and T are assigned by the recorder, in the
// order events happened; everything else is set by whoever observed the event.
// An Event must not be modified once handed to the recorder.
type Event struct {
	Seq  uint64 `json:"seq"`
	T    int64  `json:"t"` // nanoseconds since the recording started (monotonic)
	Kind Kind   `json:"kind"`

	Conn   string          `json:"conn,omitempty"`
	Dir    Dir             `json:"dir,omitempty"`
	Type   string          `json:"type,omitempty"`
	Name   string          `json:"name,omitempty"`
	Method string          `json:"method,omitempty"`
	URL    string          `json:"url,omitempty"`
	Status int             `json:"status,omitempty"`
	Code   int             `json:"code,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Header http.Header     `json:"header,omitempty"`
	Attrs  json.RawMessage `json:"attrs,omitempty"` // small JSON object of kind-specific facts

	Body      Payload `json:"-"` // encoded as one of "json", "text" or "b64"
	Size      int64   `json:"size,omitempty"`
	Truncated bool    `json:"truncated,omitempty"`
	Err       string  `json:"err,omitempty"`
}

// Payload holds message or body bytes exactly as they crossed the wire.
//
// On disk a payload is written under one of three keys, chosen from the bytes:
// "json" when they are one valid JSON value that can be embedded verbatim (valid
// UTF-8 and no line breaks, so the NDJSON line stays one line), "text" as a JSON
// string for other valid UTF-8, and "b64" (standard base64) for anything else or
// when Binary is set. JSON is never base64-encoded unless it arrived in a binary
// frame. Reading restores the exact bytes in every case.
type Payload struct {
	Data   []byte
	Binary bool // the bytes arrived as binary (a binary WebSocket frame)
}

// Encoding names the key a payload is written under.
type Encoding string

const (
	EncodingNone Encoding = ""
	EncodingJSON Encoding = "json"
	EncodingText Encoding = "text"
	EncodingB64  Encoding = "b64"
)

// Encoding reports which key p is written under.
func (p Payload) Encoding() Encoding {
	if p.Data == nil {
		return EncodingNone
	}
	if p.Binary || !utf8.Valid(p.Data) {
		return EncodingB64
	}
	if embeddableJSON(p.Data) {
		return EncodingJSON
	}
	return EncodingText
}

// embeddableJSON reports whether b can be written verbatim as a JSON value inside
// an NDJSON line.
func embeddableJSON(b []byte) bool {
	for _, c := range b {
		if c == '\n' || c == '\r' {
			return false
		}
	}
	return json.Valid(b)
}

// Text returns a payload for text bytes (not copied).
func Text(b []byte) Payload { return Payload{Data: b} }

// Binary returns a payload for binary bytes (not copied).
func Binary(b []byte) Payload { return Payload{Data: b, Binary: true} }

// Header is the body of the first line of a bundle.
type Header struct {
	Format   int       `json:"format"`
	Tool     string    `json:"tool"`    // "wireproof <version>"
	Started  time.Time `json:"started"` // wall clock at t=0
	Manifest Manifest  `json:"manifest"`
}

// Manifest says what was run.
type Manifest struct {
	Scenario string            `json:"scenario,omitempty"`
	Provider string            `json:"provider,omitempty"`
	Model    string            `json:"model,omitempty"`
	Revision string            `json:"revision,omitempty"`
	Dirty    bool              `json:"dirty,omitempty"`
	Commands [][]string        `json:"commands,omitempty"` // command lines run (server, recorded command)
	Options  map[string]string `json:"options,omitempty"`  // flags and settings of the run
}

// Trailer is the body of the last line of a cleanly closed bundle.
type Trailer struct {
	Events uint64          `json:"events"` // event lines before the trailer, header included
	Kinds  map[Kind]uint64 `json:"kinds"`
	Bytes  int64           `json:"bytes"` // uncompressed bytes before the trailer line
	// Digest is, in format 1, "sha256:<hex>" of those bytes. Format 2 has
	// none: the seal after the trailer vouches for the stored file.
	Digest string            `json:"digest,omitempty"`
	Extra  map[string]string `json:"extra,omitempty"`
}
