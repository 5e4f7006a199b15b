package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/t3"
)

// readBundle reads every event of a cleanly closed bundle.
func readBundle(t *testing.T, path string) []bundle.Event {
	t.Helper()
	c, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatalf("reading the bundle: %v", err)
	}
	if c.Truncated {
		t.Fatalf("the bundle is truncated: %s", c.TruncatedReason)
	}
	return c.Events
}

// wireMessage is one Effect RPC message as recorded, with its raw fields.
type wireMessage struct {
	ev   *bundle.Event
	keys []string // top-level keys in wire order
	raw  map[string]json.RawMessage
}

func (m wireMessage) tag() string { return m.str("_tag") }

func (m wireMessage) str(key string) string {
	var s string
	_ = json.Unmarshal(m.raw[key], &s)
	return s
}

// idKey is a request id's decimal text, whatever its JSON type.
func idKey(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// rpcMessages splits the text frames of /ws connections into messages (a
// frame is one message or an array of them).
func rpcMessages(events []bundle.Event) ([]wireMessage, error) {
	rpcConns := map[string]bool{}
	var out []wireMessage
	for i := range events {
		ev := &events[i]
		switch ev.Kind {
		case bundle.KindWSOpen:
			rpcConns[ev.Conn] = strings.HasPrefix(ev.URL, t3.PathWebSocket)
		case bundle.KindWSMessage:
			if !rpcConns[ev.Conn] {
				continue
			}
			frame := bytes.TrimSpace(ev.Body.Data)
			var parts []json.RawMessage
			if len(frame) > 0 && frame[0] == '[' {
				if err := json.Unmarshal(frame, &parts); err != nil {
					return nil, fmt.Errorf("seq %d: array frame %s: %w", ev.Seq, frame, err)
				}
			} else {
				parts = []json.RawMessage{frame}
			}
			for _, p := range parts {
				keys, err := objectKeys(p)
				if err != nil {
					return nil, fmt.Errorf("seq %d: message %s: %w", ev.Seq, p, err)
				}
				m := wireMessage{ev: ev, keys: keys}
				if err := json.Unmarshal(p, &m.raw); err != nil {
					return nil, fmt.Errorf("seq %d: message %s: %w", ev.Seq, p, err)
				}
				out = append(out, m)
			}
		}
	}
	return out, nil
}

// objectKeys lists a JSON object's top-level keys in the order they appear.
func objectKeys(obj []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// checkPrompt checks that the client launched with verify's idle prompt,
// word for word (client.mjs carries its own copy of it).
func checkPrompt(t *testing.T, events []bundle.Event, want string) {
	t.Helper()
	msgs, err := rpcMessages(events)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.tag() != effectrpc.TagRequest || m.str("tag") != t3.MethodLaunchThread {
			continue
		}
		var p struct {
			InitialMessage struct {
				Text string `json:"text"`
			} `json:"initialMessage"`
		}
		if err := json.Unmarshal(m.raw["payload"], &p); err != nil {
			t.Fatalf("launchThread payload: %v", err)
		}
		if diff := cmp.Diff(want, p.InitialMessage.Text); diff != "" {
			t.Errorf("launch prompt differs from verify.Prompt (-want +got):\n%s", diff)
		}
		return
	}
	t.Errorf("no %s Request was recorded", t3.MethodLaunchThread)
}

// checkWire checks what the real client put on the wire and how the fixture
// answered it, message by message (see wireProblems), and that there was
// enough traffic for those checks to mean something.
func checkWire(t *testing.T, events []bundle.Event) {
	t.Helper()
	msgs, err := rpcMessages(events)
	if err != nil {
		t.Fatal(err)
	}
	problems, n := wireProblems(msgs)
	for _, p := range problems {
		t.Error(p)
	}
	// The idle scenario streams a snapshot and dozens of events.
	if n.requests < 5 || n.chunks < 2 || n.acks < 1 {
		t.Errorf("recorded %d Requests, %d Chunks, %d Acks: too little traffic to check the Ack protocol", n.requests, n.chunks, n.acks)
	}
}

// wireCounts counts the messages wireProblems looked at.
type wireCounts struct{ requests, chunks, acks int }

// wireProblems lists every departure from Effect 4.1.0's wire behaviour:
// a Request id that is not a number, "headers" not [] or not last, a second
// Chunk of a stream before the client acked the previous one, a Chunk of more
// than one value, and an interrupted call's Exit that is not an Interrupt.
func wireProblems(msgs []wireMessage) ([]string, wireCounts) {
	var problems []string
	var n wireCounts
	tracing := []string{"traceId", "spanId", "sampled"}
	awaitingAck := map[string]bool{} // conn+id: a Chunk was sent and not yet acked
	interrupted := map[string]bool{} // conn+id: the client sent an Interrupt
	for _, m := range msgs {
		id := m.ev.Conn + "/"
		switch m.tag() {
		case effectrpc.TagRequest:
			n.requests++
			if raw := m.raw["id"]; len(raw) == 0 || raw[0] < '0' || raw[0] > '9' {
				problems = append(problems, fmt.Sprintf("seq %d: Request id %s is not a JSON number (Effect 4.1.0 sends numbers)", m.ev.Seq, raw))
			}
			if got := string(m.raw["headers"]); got != "[]" {
				problems = append(problems, fmt.Sprintf("seq %d: Request headers = %s, want []", m.ev.Seq, got))
			}
			keys := slices.DeleteFunc(slices.Clone(m.keys), func(k string) bool { return slices.Contains(tracing, k) })
			if want := []string{"_tag", "id", "tag", "payload", "headers"}; !slices.Equal(want, keys) {
				problems = append(problems, fmt.Sprintf("seq %d: Request keys (tracing keys left out) = %v, want %v", m.ev.Seq, keys, want))
			}
		case effectrpc.TagChunk:
			n.chunks++
			id += idKey(m.raw["requestId"])
			if awaitingAck[id] {
				problems = append(problems, fmt.Sprintf("seq %d: Chunk for request %s before the client acked the previous one", m.ev.Seq, id))
			}
			awaitingAck[id] = true
			var values []json.RawMessage
			if err := json.Unmarshal(m.raw["values"], &values); err != nil || len(values) != 1 {
				problems = append(problems, fmt.Sprintf("seq %d: Chunk values %.80s: want one value (err %v)", m.ev.Seq, m.raw["values"], err))
			}
		case effectrpc.TagAck:
			n.acks++
			id += idKey(m.raw["requestId"])
			if !awaitingAck[id] {
				problems = append(problems, fmt.Sprintf("seq %d: Ack for request %s with no Chunk unacked", m.ev.Seq, id))
			}
			awaitingAck[id] = false
		case effectrpc.TagInterrupt:
			interrupted[id+idKey(m.raw["requestId"])] = true
		case effectrpc.TagExit:
			if interrupted[id+idKey(m.raw["requestId"])] {
				if p := interruptExitProblem(m); p != "" {
					problems = append(problems, p)
				}
			}
		}
	}
	return problems, n
}

// interruptExitProblem checks the Exit of an interrupted call: a Failure
// whose cause is only Interrupts with numeric fiber ids, as Effect's server
// sends. It returns "" when the Exit is right.
func interruptExitProblem(m wireMessage) string {
	var exit struct {
		Tag   string `json:"_tag"`
		Cause []struct {
			Tag     string          `json:"_tag"`
			FiberID json.RawMessage `json:"fiberId"`
		} `json:"cause"`
	}
	if err := json.Unmarshal(m.raw["exit"], &exit); err != nil {
		return fmt.Sprintf("seq %d: Exit %s: %v", m.ev.Seq, m.raw["exit"], err)
	}
	ok := exit.Tag == "Failure" && len(exit.Cause) > 0
	for _, c := range exit.Cause {
		ok = ok && c.Tag == "Interrupt" && len(c.FiberID) > 0 && c.FiberID[0] >= '0' && c.FiberID[0] <= '9'
	}
	if !ok {
		return fmt.Sprintf("seq %d: Exit of an interrupted call = %s, want a Failure of Interrupts with numeric fiberIds", m.ev.Seq, m.raw["exit"])
	}
	return ""
}

// checkCalls decodes the recording with replay's Correlator and checks how
// every call ended.
func checkCalls(t *testing.T, events []bundle.Event, threadID string) {
	t.Helper()
	var ended []string
	c := effectrpc.NewCorrelator(func(ev *effectrpc.Step) {
		// A server message still in flight when the client closed its side
		// (the Exit answering an Interrupt) must still find its call.
		if ev.Err != nil {
			t.Errorf("seq %d: the correlator could not decode %.120s: %v", ev.Seq, ev.Raw, ev.Err)
		}
		if ev.Call == nil || !ev.Ended {
			return
		}
		ended = append(ended, describeCall(ev.Call, threadID))
	}, &effectrpc.Options{Path: t3.PathWebSocket})
	for i := range events {
		c.Feed(&events[i])
	}
	if len(events) > 0 {
		c.End(&events[len(events)-1])
	}
	slices.Sort(ended)
	ended = slices.Compact(ended)
	want := []string{
		"orchestration.getThreadProjection (other thread): failure Fail OrchestrationV2GetThreadProjectionError",
		"orchestration.getThreadProjection (our thread): success",
		"orchestration.getThreadProjection (threadId 42): failure Die",
		"orchestration.launchThread (our thread): success",
		"orchestration.noSuchMethod (our thread): failure Die",
		"orchestration.subscribeThread (our thread): interrupted by the client",
	}
	if diff := cmp.Diff(want, ended); diff != "" {
		t.Errorf("how the recorded calls ended (-want +got):\n%s", diff)
	}
}

// describeCall summarises a call's end in one comparable line.
func describeCall(call *effectrpc.Call, threadID string) string {
	who := "other thread"
	switch {
	case call.ThreadID == threadID:
		who = "our thread"
	case call.ThreadID == "":
		who = "no threadId"
	}
	if call.Method == t3.MethodGetProjection && call.ThreadID == "" {
		who = "threadId 42"
	}
	prefix := fmt.Sprintf("%s (%s): ", call.Method, who)
	// Effect's client closes the socket right after it sends an Interrupt,
	// so the server's Exit for it may or may not make it onto the wire first:
	// both endings are the real client's behaviour. checkWire checks that
	// Exit whenever it was sent.
	if call.Interrupted {
		cleanClose := call.Outcome == effectrpc.OutcomeUnknown && strings.HasPrefix(call.Reason, "the socket closed (1000")
		if cleanClose || (call.Outcome == effectrpc.OutcomeFailure && call.Cause != nil && call.Cause.Interrupted()) {
			return prefix + "interrupted by the client"
		}
	}
	s := prefix + string(call.Outcome)
	if call.Outcome != effectrpc.OutcomeSuccess && call.Reason != "" {
		s += " (" + call.Reason + ")"
	}
	if cause := call.Cause; cause != nil {
		for _, f := range cause.Fails {
			var e struct {
				Tag string `json:"_tag"`
			}
			_ = json.Unmarshal(f, &e)
			s += " Fail " + e.Tag
		}
		if len(cause.Dies) > 0 {
			s += " Die"
		}
		if len(cause.Interrupts) > 0 {
			s += " Interrupt"
		}
	}
	if call.Interrupted {
		s += ", interrupted by the client"
	}
	return s
}
