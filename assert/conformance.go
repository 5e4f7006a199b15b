package assert

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
)

// Conformance is the protocol-conformance suite (SuiteConformance): checks
// of the protocols themselves, whatever the scenario, run on every decoded
// protocol event of every bundle (plain recordings included) until the run's
// end mark. The first failure decides the suite.
var Conformance = slices.Concat(Checks[*protocol.Event]{
	{ID: CheckAnswersRequest, Message: "A response answers no request in flight", Stage: StageEvent, Test: answersRequest},
	{ID: CheckIDNotReused, Message: "A request id was reused while in flight", Stage: StageEvent, Test: idNotReused},
	{ID: CheckStreamAcked, Message: "A stream chunk was sent before the previous one was acknowledged", Stage: StageEvent, Test: streamAcked},
	{ID: CheckInterruptAnswer, Message: "An interrupted call was never answered", Stage: StageEvent, Test: interruptAnswered},
	{ID: CheckJSONRPCEnvelope, Message: "Invalid JSON-RPC 2.0 message", Stage: StageEvent, Test: jsonRPCEnvelope},
	{ID: CheckJSONRPCAnswered, Message: "A JSON-RPC request was never answered", Stage: StageEvent, Test: jsonRPCAnswered},
	{ID: CheckHTTPBodyLength, Message: "HTTP body length differs from its Content-Length", Stage: StageEvent, Test: httpBodyLength},
	{ID: CheckWebSocketCloseOK, Message: "Invalid WebSocket close code", Stage: StageEvent, Test: wsCloseCode},
}, modelChecks)

// answersRequest: every answer (response, chunk) and every client message of
// a call (ack, interrupt) belongs to a request in flight, so each request is
// answered at most once. Messages that crossed their call's end on the wire
// (Event.Late) and a JSON-RPC error answering an unparseable request (id
// null) are not answers to judge.
func answersRequest(ev *protocol.Event) *Failure {
	switch ev.Kind {
	case protocol.KindResponse, protocol.KindChunk, protocol.KindAck, protocol.KindInterrupt:
	default:
		return nil
	}
	if ev.Call != nil || ev.Late || ev.Protocol == protocol.HTTP || string(ev.RawID) == "null" || (ev.Protocol == protocol.JSONRPC && ev.RawID == nil) {
		return nil
	}
	return &Failure{
		Expected: fmt.Sprintf("a %s for a request in flight", ev.Kind),
		Seen:     fmt.Sprintf("a %s %s for id %s, which is not in flight (never requested, or already answered)", ev.Protocol, ev.Kind, ev.ID),
	}
}

// idNotReused: a request id is not reused while its call is in flight.
func idNotReused(ev *protocol.Event) *Failure {
	if ev.Kind != protocol.KindRequest || !ev.Reused {
		return nil
	}
	return &Failure{Expected: "a request id not in flight",
		Seen: fmt.Sprintf("%s request %s reuses id %s while its call is in flight", ev.Protocol, ev.Method, ev.ID)}
}

// streamAcked: an Effect RPC stream sends its next chunk only after the
// client acknowledged the previous one.
func streamAcked(ev *protocol.Event) *Failure {
	if ev.Kind != protocol.KindChunk || ev.Protocol != protocol.EffectRPC || ev.Call == nil || ev.Call.Chunks-1 <= ev.Call.Acks {
		return nil
	}
	return &Failure{Expected: fmt.Sprintf("an Ack of chunk %d of %s (id %s) before chunk %d", ev.Call.Chunks-1, ev.Call.Method, ev.ID, ev.Call.Chunks),
		Seen: fmt.Sprintf("chunk %d after %d Ack(s)", ev.Call.Chunks, ev.Call.Acks)}
}

// interruptAnswered: a call the client interrupted is answered (its Exit)
// before the server closes the connection. A connection the client closed
// first, a server that stopped and a bundle that ended are not the server's
// doing to judge.
func interruptAnswered(ev *protocol.Event) *Failure {
	if ev.Kind != protocol.KindEnd || ev.Call == nil || !ev.Call.Interrupted || ev.ClosedBy != bundle.DirServerToClient {
		return nil
	}
	return &Failure{Expected: fmt.Sprintf("an Exit answering the Interrupt of %s (id %s)", ev.Call.Method, ev.ID),
		Seen: "the server closed the connection without answering it"}
}

// jsonRPCEnvelope: every JSON-RPC message follows the 2.0 envelope rules,
// as its connection's dialect words them (the Codex app-server's omits the
// "jsonrpc" member).
func jsonRPCEnvelope(ev *protocol.Event) *Failure {
	if len(ev.Invalid) == 0 {
		return nil
	}
	expected := "a JSON-RPC 2.0 request, notification or response"
	if ev.Dialect == protocol.DialectCodex {
		expected = `a request, notification or response of the Codex app-server's JSON-RPC (JSON-RPC 2.0 without "jsonrpc")`
	}
	return &Failure{Expected: expected, Seen: strings.Join(ev.Invalid, "; ") + ": " + clip(ev.Body, 200)}
}

// jsonRPCAnswered: on a Codex app-server's stdio, every request of either
// side is answered before the app-server exits on its own. An app-server
// killed by a signal or exiting while the server is being stopped, a
// server that stopped and a bundle that ended are not judged
// (Event.Unanswered).
func jsonRPCAnswered(ev *protocol.Event) *Failure {
	if ev.Kind != protocol.KindEnd || !ev.Unanswered || ev.Call == nil {
		return nil
	}
	who, by := "the server", "Codex"
	if ev.Call.Dir == bundle.DirServerToClient {
		who, by = "Codex", "the server"
	}
	return &Failure{Expected: fmt.Sprintf("an answer from %s to %s's request %s (id %s, seq %d)", by, who, ev.Call.Method, ev.ID, ev.Call.RequestSeq),
		Seen: ev.Why + " with it unanswered"}
}

// httpBodyLength: a response body relayed whole has the length its
// Content-Length declared.
func httpBodyLength(ev *protocol.Event) *Failure {
	if ev.Protocol != protocol.HTTP || ev.Kind != protocol.KindResponse || ev.Declared < 0 || ev.BodyCut || ev.Actual == ev.Declared {
		return nil
	}
	return &Failure{Expected: fmt.Sprintf("%d body bytes (Content-Length)", ev.Declared),
		Seen: fmt.Sprintf("%d body bytes in the response to %s", ev.Actual, ev.Method), Diff: valueDiff(ev.Declared, ev.Actual)}
}

// wsCloseCode: a close frame carries a code an endpoint may send (RFC 6455
// 7.4): 1000-1003, 1007-1014 or 3000-4999. 1005 (a close frame without a
// code) and 1006 (no close frame) are what a side saw, not codes sent.
func wsCloseCode(ev *protocol.Event) *Failure {
	if ev.Kind != protocol.KindClose || ev.Abnormal || validCloseCode(ev.Code) {
		return nil
	}
	return &Failure{Expected: "a close code of RFC 6455 (1000-1003, 1007-1014, 3000-4999)",
		Seen: fmt.Sprintf("close code %d from the %s", ev.Code, sideName(ev.Dir))}
}

func validCloseCode(c int) bool {
	switch {
	case c == 0, c == 1005, c == 1006:
		return true
	case c >= 1000 && c <= 1003, c >= 1007 && c <= 1014, c >= 3000 && c <= 4999:
		return true
	}
	return false
}

func sideName(d bundle.Dir) string {
	if d == bundle.DirServerToClient {
		return "server"
	}
	return "client"
}

// clip shortens b to at most n bytes for messages.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}
