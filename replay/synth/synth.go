// Package synth builds protocol-faithful event streams of background-delivery
// runs, passing and failing, without a server: the events a recorder would hand
// to the engine for a run of each scenario, with an optional fault. Tests, the
// golden corpus and the replay benchmark use it until recordings of real runs
// replace it.
package synth

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

// Options say what run to build. The zero value of each field is a sensible
// default; Scenario is required.
type Options struct {
	Scenario assert.Scenario
	Fault    string // one of Faults, or "" for a passing run
	// StringIDs sends request ids as decimal strings (older Effect) instead of numbers.
	StringIDs bool
	// NDJSON frames every message with a newline and splits each frame in two
	// (the ndjson serialization), instead of one message per frame.
	NDJSON bool
	// Filler adds this many extra command_execution turn items, each with
	// FillerBytes of text, to every projection: a projection-heavy bundle.
	Filler      int
	FillerBytes int
	// Polls repeats the middle observations this many extra times (a long run).
	Polls int
	// Provider, when set, is the provider driver the manifest names
	// (assert.OptionProviderDriver); unset, the manifest names none, as
	// every bundle recorded before a second provider.
	Provider assert.Provider
}

// Fixed facts of every synthetic run.
const (
	ThreadID      = "thread-parent-0001"
	ChildThreadID = "thread-child-0001"
	Secret        = "RESULT_5b1e0c1e-3f57-4e0e-9d39-3b0f3c1f6a10"
	GatePath      = "/7d3c9a52-7b84-4a43-9fd5-2a7f5a0d1e11"
	GateURL       = "http://127.0.0.1:40123" + GatePath
)

// Script is a built run: its events, in seq order from the header (seq 0),
// and the seq of its notable steps by label (see the Label* constants).
type Script struct {
	Events []bundle.Event
	At     map[string]uint64
}

// Labels of notable steps in Script.At.
const (
	LabelRunMark      = "run-mark"
	LabelLaunchExit   = "launch-exit"
	LabelGateRequest  = "gate-request"
	LabelParentGate   = "parent-gate-request"
	LabelRelease      = "gate-release"
	LabelDelegated    = "obs-delegated"    // first observation with the child delegated
	LabelCompleted    = "obs-completed"    // the child completed (parent still waiting)
	LabelDelivered    = "obs-delivered"    // completion delivered to the parent
	LabelFinal        = "obs-final"        // the completing observation
	LabelNestedRead   = "nested-read-exit" // the driver's read of the child thread
	LabelClosing      = "closing"          // where the closing checks run: the final observation, or the nested read
	LabelRestartMark  = "restart-mark"
	LabelRestartReady = "restart-ready"
	LabelRestartRead  = "restart-read-end"
	LabelLast         = "last" // the last event before the verdict
)

// builder appends events with deterministic times (1 ms apart).
type builder struct {
	o      Options
	s      Script
	t      int64
	nextID uint64
	http   int
}

func (b *builder) add(ev bundle.Event) uint64 {
	ev.Seq = uint64(len(b.s.Events))
	if ev.Kind != bundle.KindHeader {
		b.t += int64(time.Millisecond)
		ev.T = b.t
	}
	b.s.Events = append(b.s.Events, ev)
	return ev.Seq
}

func (b *builder) label(name string, seq uint64) { b.s.At[name] = seq }

func mustJSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return out
}

// Build returns the events of one run.
func Build(o Options) (Script, error) {
	switch {
	case o.Scenario.Known():
	default:
		return Script{}, fmt.Errorf("synth: unknown scenario %q (want idle, active, native or nested)", o.Scenario)
	}
	if o.Fault != "" {
		f, ok := faults[o.Fault]
		if !ok {
			return Script{}, fmt.Errorf("synth: unknown fault %q", o.Fault)
		}
		if len(f.Scenarios) > 0 && !slices.Contains(f.Scenarios, o.Scenario) {
			return Script{}, fmt.Errorf("synth: fault %q does not apply to scenario %s", o.Fault, o.Scenario)
		}
	}
	b := &builder{o: o, s: Script{At: map[string]uint64{}}}
	b.run()
	return b.s, nil
}

// MustBuild is Build for options known to be valid.
func MustBuild(o Options) Script {
	s, err := Build(o)
	if err != nil {
		panic(err)
	}
	return s
}

// id returns the next request id in the configured JSON type.
func (b *builder) id() effectrpc.RequestID {
	n := b.nextID
	b.nextID++
	if b.o.StringIDs {
		return effectrpc.StringID(n)
	}
	return effectrpc.NumberID(n)
}

// send records one RPC message on the run's socket, framed as configured.
func (b *builder) send(dir bundle.Dir, m effectrpc.Message) uint64 { return b.sendOn("ws1", dir, m) }

// sendOn records one RPC message on socket conn, framed as configured.
func (b *builder) sendOn(conn string, dir bundle.Dir, m effectrpc.Message) uint64 {
	raw := mustJSON(m)
	if !b.o.NDJSON {
		return b.add(bundle.Event{Kind: bundle.KindWSMessage, Conn: conn, Dir: dir, Type: bundle.TypeText, Body: bundle.Text(raw)})
	}
	raw = append(raw, '\n')
	half := len(raw) / 2
	b.add(bundle.Event{Kind: bundle.KindWSMessage, Conn: conn, Dir: dir, Type: bundle.TypeText, Body: bundle.Text(raw[:half])})
	return b.add(bundle.Event{Kind: bundle.KindWSMessage, Conn: conn, Dir: dir, Type: bundle.TypeText, Body: bundle.Text(raw[half:])})
}

func (b *builder) request(method string, payload any) effectrpc.RequestID {
	id := b.id()
	b.send(bundle.DirClientToServer, effectrpc.Message{Tag: effectrpc.TagRequest, ID: id, Method: method, Payload: mustJSON(payload)})
	return id
}

func (b *builder) exit(id effectrpc.RequestID, value any) uint64 {
	return b.send(bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagExit, RequestID: id, Exit: &effectrpc.Exit{Tag: effectrpc.ExitSuccess, Value: mustJSON(value)}})
}

// chunk sends one stream item and the client's Ack.
func (b *builder) chunk(id effectrpc.RequestID, item any) uint64 {
	seq := b.send(bundle.DirServerToClient, effectrpc.Message{Tag: effectrpc.TagChunk, RequestID: id, Values: mustJSON([]any{item})})
	b.send(bundle.DirClientToServer, effectrpc.Message{Tag: effectrpc.TagAck, RequestID: id})
	return seq
}

// read answers one subscription event with a getThreadProjection round trip,
// as the verifier does; it returns the seq of the answer.
func (b *builder) read(sub effectrpc.RequestID, thread string, p any, eventType string) uint64 {
	b.chunk(sub, map[string]any{"kind": "event", "sequence": b.nextID, "event": map[string]any{
		"id": fmt.Sprintf("evt-%d", b.nextID), "threadId": thread, "occurredAt": "2026-01-01T00:00:00.000Z", "type": eventType, "payload": map[string]any{}}})
	id := b.request(t3.MethodGetProjection, map[string]string{"threadId": thread})
	return b.exit(id, p)
}

func (b *builder) gate(kind bundle.Kind, path string, status int, body string) uint64 {
	ev := bundle.Event{Kind: kind, Conn: "gate", URL: path}
	if kind == bundle.KindGateRequest {
		ev.Method = "GET"
	} else {
		ev.Status = status
		ev.Body = bundle.Text([]byte(body))
	}
	return b.add(ev)
}

func (b *builder) mark(name string, body any) uint64 {
	var data []byte
	if body != nil {
		data = mustJSON(body)
	}
	return b.add(bundle.Event{Kind: bundle.KindMark, Name: name, Body: bundle.Text(data)})
}

// httpGet records one HTTP GET exchange with a JSON answer; it returns the seq of its end.
func (b *builder) httpGet(path string, status int, body []byte) uint64 {
	b.http++
	conn := fmt.Sprintf("h%d", b.http)
	b.add(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: conn, Method: "GET", URL: path,
		Header: map[string][]string{"Authorization": {"[REDACTED]"}, t3.ProtocolHeader: {"2"}}})
	b.add(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: status, Header: map[string][]string{"Content-Type": {"application/json"}}})
	// Two body chunks, as a streamed body arrives.
	half := len(body) / 2
	b.add(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text(body[:half])})
	b.add(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text(body[half:])})
	return b.add(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: conn, Size: int64(len(body))})
}

func (b *builder) httpPost(path string, status int, body string) {
	b.http++
	conn := fmt.Sprintf("h%d", b.http)
	b.add(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: conn, Method: "POST", URL: path})
	b.add(bundle.Event{Kind: bundle.KindHTTPResponse, Conn: conn, Status: status})
	b.add(bundle.Event{Kind: bundle.KindHTTPBody, Conn: conn, Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(body))})
	b.add(bundle.Event{Kind: bundle.KindHTTPEnd, Conn: conn, Size: int64(len(body))})
}

func (b *builder) server(kind bundle.Kind, ev bundle.Event) uint64 {
	ev.Kind, ev.Conn = kind, "server"
	return b.add(ev)
}

// info is the run mark's body.
func info(scenario assert.Scenario) replay.RunInfo {
	return replay.RunInfo{Scenario: scenario, ThreadID: ThreadID, ProjectID: "project-0001", Secret: Secret, GateURL: GateURL, Provider: "fixture", Model: "scripted"}
}

// NotDriven is what verify records of a run it drives nothing of, its
// scenario not applying to its provider (o.Provider): the header and the
// driver's done mark. Recorded appends the verdict, as the live driver does.
func NotDriven(o Options) Script {
	b := &builder{o: o, s: Script{At: map[string]uint64{}}}
	b.add(bundle.Event{Kind: bundle.KindHeader, Body: bundle.Text(mustJSON(header(o)))})
	b.mark(replay.MarkPhase, replay.PhaseMark{Phase: replay.PhaseDone})
	return b.s
}
