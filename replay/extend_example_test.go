package replay_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/replay"
)

// stdio returns a plain recording of JSON-RPC 2.0 lines on stdio.
func stdio(lines ...string) []bundle.Event {
	var evs []bundle.Event
	for i, l := range lines {
		dir, body, _ := strings.Cut(l, " ")
		evs = append(evs, bundle.Event{Seq: uint64(i + 1), T: int64(i + 1), Kind: bundle.KindStdioLine, Conn: "stdio",
			Dir: bundle.Dir(dir), Body: bundle.Text([]byte(body))})
	}
	return evs
}

func run(opts *replay.EngineOptions, evs []bundle.Event) assert.Verdict {
	e := replay.NewEngine(opts)
	if err := e.FeedHeader(bundle.Header{Format: bundle.FormatVersion}); err != nil {
		panic(err)
	}
	for i := range evs {
		if err := e.Feed(&evs[i]); err != nil {
			panic(err)
		}
	}
	return e.Verdict()
}

// A check is a value: an id, a message, a stage and a test of what it
// observes. This one fails a JSON-RPC method named with a space.
func Example_check() {
	noSpaces := assert.Check[*protocol.Event]{
		ID: "method-name", Message: "A method name has a space", Stage: assert.StageEvent,
		Test: func(ev *protocol.Event) *assert.Failure {
			if ev.Kind != protocol.KindRequest || !strings.Contains(ev.Method, " ") {
				return nil
			}
			return &assert.Failure{Expected: "a method name without spaces", Seen: fmt.Sprintf("%q", ev.Method)}
		},
	}
	f := assert.Checks[*protocol.Event]{noSpaces}.Run(&protocol.Event{Kind: protocol.KindRequest, Method: "tools call"})
	fmt.Println(f.Check, "|", f.Message, "|", f.Seen)
	// Output: method-name | A method name has a space | "tools call"
}

// A suite is an ordered list of checks with an id, and the bundle decides
// whether it runs: this one runs only on bundles whose manifest says they
// recorded a provider. The verdict names every suite that ran.
func ExampleEventSuite() {
	suite := replay.EventSuite{
		ID:      "provider-calls",
		Applies: func(m bundle.Manifest) bool { return m.Provider != "" },
		Checks: assert.Checks[*protocol.Event]{{
			ID: "no-errors", Message: "A provider call failed", Stage: assert.StageEvent,
			Test: func(ev *protocol.Event) *assert.Failure {
				if ev.Kind == protocol.KindResponse && ev.Call != nil && ev.Call.Outcome == protocol.OutcomeFailure {
					return &assert.Failure{Expected: "a result", Seen: "an error answering " + ev.Call.Method}
				}
				return nil
			},
		}},
	}
	evs := stdio(`c2s {"jsonrpc":"2.0","id":1,"method":"thread/start"}`,
		`s2c {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no model"}}`)
	e := replay.NewEngine(&replay.EngineOptions{Suites: []replay.EventSuite{suite}})
	_ = e.FeedHeader(bundle.Header{Format: bundle.FormatVersion, Manifest: bundle.Manifest{Provider: "codex"}})
	for i := range evs {
		_ = e.Feed(&evs[i])
	}
	v := e.Verdict()
	for _, s := range v.Suites {
		fmt.Println(s.Suite, s.Status)
	}
	fmt.Println(v.Failure.Check, "@", v.Failure.Seq, v.Failure.Seen)
	// Output:
	// protocol-conformance passed
	// provider-calls failed
	// no-errors @ 2 an error answering thread/start
}

// lineDecoder is a decoder for a made-up line protocol on stdio: "PING n"
// asks, "PONG n" answers.
type lineDecoder struct{ open map[string]*protocol.Call }

func (d *lineDecoder) Feed(ev *bundle.Event, emit protocol.Emit) {
	verb, n, _ := strings.Cut(string(ev.Body.Data), " ")
	out := &protocol.Event{Seq: ev.Seq, T: ev.T, Conn: ev.Conn, Dir: ev.Dir, Protocol: "ping", ID: n, Body: ev.Body.Data}
	switch verb {
	case "PING":
		out.Kind, out.Method = protocol.KindRequest, "PING"
		out.Reused = d.open[n] != nil
		if !out.Reused {
			out.Call = &protocol.Call{Protocol: "ping", Conn: ev.Conn, ID: n, Method: "PING", RequestSeq: ev.Seq, Outcome: protocol.OutcomeOpen}
			d.open[n] = out.Call
		}
	case "PONG":
		out.Kind, out.Call = protocol.KindResponse, d.open[n]
		delete(d.open, n)
	}
	emit(out)
}

func (d *lineDecoder) Stop(*bundle.Event, string, protocol.Emit) {}

// A decoder turns a connection's bundle events into protocol events; a
// route gives it the connections that carry its protocol, decided from the
// first line. The conformance suite then judges its calls like any other.
func ExampleEngineOptions_routes() {
	route := protocol.Route{Protocol: "ping", Decoder: &lineDecoder{open: map[string]*protocol.Call{}},
		Match: func(open, first *bundle.Event) bool {
			return first != nil && first.Kind == bundle.KindStdioLine && bytes.HasPrefix(first.Body.Data, []byte("PING "))
		}}
	v := run(&replay.EngineOptions{Routes: []protocol.Route{route}}, stdio("c2s PING 1", "s2c PONG 1", "s2c PONG 7"))
	fmt.Println(v.Status, v.Failure.Check, "@", v.Failure.Seq)
	fmt.Println(v.Failure.Seen)
	// Output:
	// failed answers-request @ 3
	// a ping response for id 7, which is not in flight (never requested, or already answered)
}

// An observer sees every protocol event of the one pass over the bundle:
// this one counts the calls per method, as triage's traffic counts do.
func ExampleEngineOptions_onEvent() {
	calls := map[string]int{}
	observer := func(ev *protocol.Event) {
		if ev.Kind == protocol.KindRequest {
			calls[ev.Method]++
		}
	}
	run(&replay.EngineOptions{OnEvent: observer}, stdio(
		`c2s [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		`s2c [{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`,
		`c2s {"jsonrpc":"2.0","id":3,"method":"tools/list"}`))
	fmt.Println(calls)
	// Output: map[ping:2 tools/list:1]
}
