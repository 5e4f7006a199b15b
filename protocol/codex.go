package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wireproof/wireproof/bundle"
)

// The Codex CLI's app-server (`codex app-server`) speaks JSON-RPC over its
// stdio, one message per line, in a dialect of its own: no message carries
// the "jsonrpc" member. Everything else of JSON-RPC 2.0 holds (a request has
// a method and an id, a notification a method alone, a response an id and
// exactly one of result and error, error objects with an integer code and a
// string message), and either side makes requests: the server's
// initialize, thread/start, turn/start; Codex's approval requests
// (item/commandExecution/requestApproval, item/fileChange/requestApproval,
// ...), answered by the server on stdin.
//
// A stdio channel speaks the dialect when the process its proc.start names
// runs Codex's app-server (IsCodexAppServer of its argv): the decision is a
// pure function of the bundle's events. On such a channel the decoder also
// follows Codex's notifications as calls of protocol Codex: a turn from
// turn/started to turn/completed (by the turn's id), an item from
// item/started to item/completed (by the item's id), its
// item/agentMessage/delta notifications (and any item/<type>/<...>Delta) as
// chunks; an item still open when its turn completes ends there without an
// answer (interrupted, when the turn was). And a request still open when
// the app-server exits on its own (not killed by a signal, and not while
// the server is being stopped: Router.ServerStopping) ends Unanswered:
// neither side may leave the other's request unanswered.

// Dialect names a JSON-RPC dialect; "" is JSON-RPC 2.0 itself.
type Dialect string

// DialectCodex is the Codex app-server's JSON-RPC: JSON-RPC 2.0 without the
// "jsonrpc" member.
const DialectCodex Dialect = "codex-app-server"

// Codex is the protocol of the Codex app-server's turns and items, the calls
// the decoder follows in its notifications (turn/started ↔ turn/completed,
// item/started ↔ item/completed).
const Codex Name = "codex"

// Methods of the Codex calls (Call.Method): a turn, and an item of a type
// ("item agentMessage", "item commandExecution", ...).
const (
	MethodCodexTurn = "turn"
	MethodCodexItem = "item"
)

// IsCodexAppServer reports whether argv runs the Codex CLI's app-server:
// a word whose base name is codex (or begins with "codex", as the native
// binary's and the npm shim's do) followed, later, by the word app-server.
// A word holding spaces (a shell's command string) is split into words.
func IsCodexAppServer(argv []string) bool {
	codex := false
	for _, a := range argv {
		for _, w := range strings.Fields(a) {
			switch {
			case codex && w == "app-server":
				return true
			case strings.HasPrefix(strings.ToLower(filepath.Base(w)), "codex"):
				codex = true
			}
		}
	}
	return false
}

// procArgv reads the argv of a proc.start event.
func procArgv(ev *bundle.Event) []string {
	var a struct {
		Argv []string `json:"argv"`
	}
	_ = json.Unmarshal(ev.Attrs, &a)
	return a.Argv
}

// codexConn is what the decoder follows of a Codex app-server's
// notifications: the turns and items open.
type codexConn struct {
	turns map[string]*Call
	items map[string]*codexItem
}

type codexItem struct {
	call *Call
	turn string
}

func newCodexConn() *codexConn {
	return &codexConn{turns: map[string]*Call{}, items: map[string]*codexItem{}}
}

// codexNote has the members of a Codex notification's params the decoder
// reads.
type codexNote struct {
	TurnID string `json:"turnId"`
	ItemID string `json:"itemId"`
	Turn   *struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"turn"`
	Item *struct {
		ID     string `json:"id"`
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"item"`
}

// notification follows a notification of the app-server (out, already
// emitted) into the turns and items, emitting their calls' events.
func (c *codexConn) notification(out *Event, emit Emit) {
	if out.Dir != bundle.DirServerToClient {
		return
	}
	method := out.Method
	if isItemDelta(method) {
		method = "delta"
	}
	switch method {
	case "turn/started", "turn/completed", "item/started", "item/completed", "delta":
	default:
		return
	}
	var m struct {
		Params codexNote `json:"params"`
	}
	if json.Unmarshal(out.Body, &m) != nil {
		return // the envelope is judged; a params this decoder cannot read carries no call
	}
	p := &m.Params
	ev := func(kind Kind, id, method string, call *Call) *Event {
		return &Event{Seq: out.Seq, T: out.T, Conn: out.Conn, Dir: out.Dir, Protocol: Codex, Kind: kind, ID: id, Method: method, Call: call, Body: out.Body}
	}
	switch method {
	case "turn/started":
		if p.Turn == nil || p.Turn.ID == "" || c.turns[p.Turn.ID] != nil {
			return
		}
		call := &Call{Protocol: Codex, Conn: out.Conn, ID: p.Turn.ID, Method: MethodCodexTurn, Dir: out.Dir, RequestSeq: out.Seq, Outcome: OutcomeOpen}
		c.turns[p.Turn.ID] = call
		emit(ev(KindRequest, call.ID, call.Method, call))
	case "turn/completed":
		if p.Turn == nil {
			return
		}
		call := c.turns[p.Turn.ID]
		if call == nil {
			return
		}
		delete(c.turns, p.Turn.ID)
		outcome := codexOutcome(p.Turn.Status)
		if outcome == OutcomeInterrupted {
			// The real app-server completes an interrupted turn without an
			// item/completed for the command it cut short.
			c.endItems(out, p.Turn.ID, OutcomeInterrupted, "the turn was interrupted before its item/completed", emit)
		} else {
			c.endItems(out, p.Turn.ID, OutcomeUnknown, "the turn completed without its item/completed", emit)
		}
		call.Outcome, call.EndSeq = outcome, out.Seq
		emit(ev(KindResponse, call.ID, call.Method, call))
	case "item/started":
		if p.Item == nil || p.Item.ID == "" || c.items[p.Item.ID] != nil {
			return
		}
		method := MethodCodexItem
		if p.Item.Type != "" {
			method += " " + p.Item.Type
		}
		call := &Call{Protocol: Codex, Conn: out.Conn, ID: p.Item.ID, Method: method, Dir: out.Dir, RequestSeq: out.Seq, Outcome: OutcomeOpen}
		c.items[p.Item.ID] = &codexItem{call: call, turn: p.TurnID}
		emit(ev(KindRequest, call.ID, call.Method, call))
	case "item/completed":
		if p.Item == nil {
			return
		}
		it := c.items[p.Item.ID]
		if it == nil {
			return
		}
		delete(c.items, p.Item.ID)
		it.call.Outcome, it.call.EndSeq = codexOutcome(p.Item.Status), out.Seq
		emit(ev(KindResponse, it.call.ID, it.call.Method, it.call))
	case "delta":
		it := c.items[p.ItemID]
		if it == nil {
			return
		}
		it.call.Chunks++
		emit(ev(KindChunk, it.call.ID, it.call.Method, it.call))
	}
}

// isItemDelta reports a notification of an item's streamed content, a
// chunk of its call: item/agentMessage/delta (the real 0.169.0's, seen),
// and by the same shape item/<type>/<...>Delta (a command's output, a
// reasoning's text).
func isItemDelta(method string) bool {
	return strings.HasPrefix(method, "item/") && strings.HasSuffix(strings.ToLower(method), "delta") && strings.Count(method, "/") == 2
}

// codexOutcome is the outcome of a turn's or an item's status: failed and
// declined items and failed turns failed, an interrupted turn was
// interrupted, anything else (completed; an item without a status)
// succeeded.
func codexOutcome(status string) Outcome {
	switch status {
	case "failed", "declined":
		return OutcomeFailure
	case "interrupted":
		return OutcomeInterrupted
	}
	return OutcomeSuccess
}

// endItems ends, in the order they started, the items open in turn (every
// item when turn is "") with outcome at at.
func (c *codexConn) endItems(at *Event, turn string, outcome Outcome, why string, emit Emit) {
	var calls []*Call
	for id, it := range c.items {
		if turn == "" || it.turn == turn {
			calls = append(calls, it.call)
			delete(c.items, id)
		}
	}
	sortCalls(calls)
	for _, call := range calls {
		call.Outcome, call.EndSeq = outcome, at.Seq
		emit(&Event{Seq: at.Seq, T: at.T, Conn: call.Conn, Protocol: Codex, Kind: KindEnd, ID: call.ID, Method: call.Method, Call: call, Why: why})
	}
}

// end ends every turn and item open with an unknown outcome at at.
func (c *codexConn) end(at *bundle.Event, emit Emit) {
	e := &Event{Seq: at.Seq, T: at.T}
	var turns []*Call
	for id, call := range c.turns {
		turns = append(turns, call)
		delete(c.turns, id)
	}
	c.endItems(e, "", OutcomeUnknown, "", emit)
	endCalls(Codex, at, emit, turns)
}

// exitWhy says how a process's exit (a proc.exit) ended it, and whether it
// ended on its own: an exit status, not a signal nor a broken tap.
func exitWhy(ev *bundle.Event) (string, bool) {
	switch {
	case ev.Name != "":
		return "the app-server was killed by " + ev.Name, false
	case ev.Err != "" && ev.Code < 0:
		return "the app-server's channel ended: " + ev.Err, false
	case ev.Code < 0:
		return "the app-server ended without an exit status", false
	}
	return fmt.Sprintf("the app-server exited with status %d", ev.Code), true
}

// versionProblem is the envelope's version rule in dialect d: JSON-RPC 2.0
// requires "jsonrpc":"2.0"; Codex's dialect has no such member, and one
// present must still say "2.0".
func versionProblem(m *rpcEnvelope, d Dialect) string {
	switch {
	case m.JSONRPC == nil && d == DialectCodex:
		return ""
	case m.JSONRPC == nil:
		return `no "jsonrpc" member (must be "2.0")`
	case string(bytes.TrimSpace(m.JSONRPC)) != `"2.0"`:
		return fmt.Sprintf(`"jsonrpc" is %s, not "2.0"`, m.JSONRPC)
	}
	return ""
}
