package triage

import (
	"encoding/json"
	"net/http"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
)

// DefaultMaxBody caps the bytes kept of one body, message or payload, so a
// bundle of large streams is taken apart in bounded memory. Longer bodies are
// kept up to the cap and marked truncated.
const DefaultMaxBody = 64 << 10

// Options tune Load. A nil *Options means the defaults.
type Options struct {
	// MaxBody caps the bytes kept per body; 0 means DefaultMaxBody.
	MaxBody int
	// MaxSummary caps the one-line summary of each timeline entry; 0 means 160.
	MaxSummary int
	// Delivery is the background-delivery scenario the timeline's verdict
	// is judged by; nil: delivery.Registered(), what verify records with.
	Delivery *delivery.Spec
}

// Timeline is a bundle decoded for reading. Everything in it is ordered by seq.
type Timeline struct {
	Path   string
	Header bundle.Header
	// Truncated: the bundle ended without a trailer (a killed recorder); the
	// events before the cut are all here.
	Truncated       bool
	TruncatedReason string
	Events          uint64 // the bundle's events, the header included (the trailer's count)

	Entries   []Entry // every event, one line each, for the swimlane
	HTTP      []*HTTPExchange
	WS        []*WSConn
	Calls     []*RPCCall
	Gates     []GateEvent
	Procs     []ProcEvent
	Logs      []LogLine
	Marks     []Mark
	Artifacts []Artifact
	// RPCErrors are frames the correlator could not decode.
	RPCErrors []Entry

	// Recorded is the verdict the live run wrote, if any; Replayed is the
	// verdict recomputed from the same events, with whether they agree.
	Recorded *assert.Verdict
	Replayed *replay.Result

	// ParentThread is the thread the run launched; LastParent is the last
	// projection of it seen on the wire.
	ParentThread string
	LastParent   *Projection

	// Flags are what went wrong, in seq order (flags.go).
	Flags []Flag
	// FirstBad is where the failing check's value first went wrong, when
	// that was before the event that decided it (firstbad.go).
	FirstBad *FirstBad

	callsAt map[uint64][]*RPCCall
	flagsAt map[uint64][]string
	sides   map[string]string // HTTP connection -> SideMCP or SideModel
}

// Lane is the channel an event belongs to in the swimlane.
type Lane string

const (
	LaneServer Lane = "server" // proc.*, stdio
	LaneHTTP   Lane = "http"
	LaneWS     Lane = "ws"   // ws.* and the RPC calls they carry
	LaneGate   Lane = "gate" // gate requests and releases
	LaneMarks  Lane = "marks"
	LaneRun    Lane = "run" // header, artifacts, verdict, trailer
)

// Lanes lists the lanes in the order a swimlane shows them.
var Lanes = []Lane{LaneServer, LaneHTTP, LaneWS, LaneGate, LaneMarks, LaneRun}

// Entry is one event in one line.
type Entry struct {
	Seq     uint64
	T       int64
	Kind    bundle.Kind
	Lane    Lane
	Conn    string
	Summary string
	// RPC names the RPC messages a ws.message carried ("Request
	// orchestration.launchThread #0; Exit Success #0"), when it carried any.
	RPC string
}

// Body is a payload kept for display, capped.
type Body struct {
	Data      []byte
	Binary    bool
	Size      int64 // bytes seen in the bundle, which may exceed len(Data)
	Truncated bool  // Data holds only the first bytes (or the recorder capped it)
}

// HTTPExchange is one HTTP request and its response.
type HTTPExchange struct {
	Conn       string
	Method     string
	URL        string
	Header     http.Header
	Request    Body
	RequestSeq uint64
	RequestT   int64

	Status       int
	RespHeader   http.Header
	Response     Body
	ResponseSeq  uint64
	ResponseT    int64 // 0: no response recorded
	FirstByteT   int64 // arrival of the first response body chunk
	EndSeq       uint64
	EndT         int64 // 0: never ended (the bundle was cut)
	Err          string
	responseSeen bool
}

// WSConn is one WebSocket connection.
type WSConn struct {
	Conn        string
	URL         string
	Header      http.Header
	Subprotocol string
	OpenSeq     uint64
	OpenT       int64
	Messages    []WSMessage
	CloseSeq    uint64
	CloseT      int64 // 0: not closed in the bundle
	CloseDir    bundle.Dir
	CloseCode   int
	CloseReason string
	Err         string
	// Closes are every close of the connection the bundle records, in
	// order: each side's close frame (code, reason) or how it ended for that
	// side. The Close fields above are the first of them.
	Closes []WSClose
	closed bool
}

// WSClose is one side's close of a WebSocket connection.
type WSClose struct {
	Seq    uint64
	T      int64
	Dir    bundle.Dir
	Code   int
	Reason string
	Err    string
}

// WSMessage is one WebSocket message.
type WSMessage struct {
	Seq  uint64
	T    int64
	Dir  bundle.Dir
	Body Body
}

// RPCCall is one RPC call from its Request to the message that ended it.
type RPCCall struct {
	// Protocol is the decoder's: protocol.EffectRPC for the driver's
	// socket, else the JSON-RPC, stream-json, codex, model call's.
	Protocol   protocol.Name
	Conn       string
	ID         string
	Method     string
	ThreadID   string
	Payload    Body
	StartSeq   uint64
	StartT     int64
	EndSeq     uint64
	EndT       int64
	Chunks     int
	Acks       int
	Outcome    effectrpc.Outcome
	Exit       Body   // the Exit message's exit, as JSON
	Cause      string // a failure's cause in full: each error and its chain of causes, one per line
	Reason     string // why an unknown or defect outcome
	Ended      bool
	Interruped bool
}

// AcksChunks reports whether c's protocol acknowledges a stream's chunks
// (Effect RPC's Ack), so that its Acks count means something.
func (c *RPCCall) AcksChunks() bool { return c.Protocol == protocol.EffectRPC }

// GateEvent is a gate request or release.
type GateEvent struct {
	Seq     uint64
	T       int64
	Release bool
	Method  string
	URL     string
	Status  int
	Body    Body
}

// ProcEvent is a process lifecycle event (start, ready, signal, exit).
type ProcEvent struct {
	Seq    uint64
	T      int64
	Kind   bundle.Kind
	Conn   string
	Detail string
}

// LogLine is one line a process wrote.
type LogLine struct {
	Seq    uint64
	T      int64
	Conn   string
	Stream string // stdout or stderr
	Text   string
}

// Mark is a fact the live driver wrote.
type Mark struct {
	Seq  uint64
	T    int64
	Name string
	Body Body
}

// Artifact is a small file kept with the run.
type Artifact struct {
	Seq  uint64
	T    int64
	Name string
	Body Body
}

// Projection is a thread projection as it crossed the wire.
type Projection struct {
	Seq    uint64
	T      int64
	Source string // where it was seen: the RPC method or the HTTP read
	JSON   json.RawMessage
}
