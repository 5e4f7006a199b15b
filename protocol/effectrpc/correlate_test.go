package effectrpc_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
)

// frame is a hand-written WebSocket event: ">" client to server, "<" server
// to client, "open PATH", "close", "client-close" (the client closed its
// side cleanly), "stop" (the server's proc.exit).
type frame string

func events(frames []frame) []bundle.Event {
	var evs []bundle.Event
	for i, f := range frames {
		ev := bundle.Event{Seq: uint64(i + 1), T: int64(i+1) * 1000, Conn: "ws1"}
		s := string(f)
		switch {
		case strings.HasPrefix(s, "open "):
			ev.Kind, ev.URL = bundle.KindWSOpen, strings.TrimPrefix(s, "open ")
		case s == "close":
			ev.Kind, ev.Code = bundle.KindWSClose, 1006
		case s == "client-close":
			ev.Kind, ev.Dir, ev.Code = bundle.KindWSClose, bundle.DirClientToServer, 1000
		case s == "stop":
			ev.Kind, ev.Conn = bundle.KindProcExit, "server"
		case strings.HasPrefix(s, ">"):
			ev.Kind, ev.Dir, ev.Body = bundle.KindWSMessage, bundle.DirClientToServer, bundle.Text([]byte(strings.ReplaceAll(s[1:], `\n`, "\n")))
		case strings.HasPrefix(s, "<"):
			ev.Kind, ev.Dir, ev.Body = bundle.KindWSMessage, bundle.DirServerToClient, bundle.Text([]byte(strings.ReplaceAll(s[1:], `\n`, "\n")))
		}
		evs = append(evs, ev)
	}
	return evs
}

// correlate runs frames through a Correlator and describes what it reported:
// one line per ended call and per error.
func correlate(frames []frame) []string {
	var out []string
	c := effectrpc.NewCorrelator(func(e *effectrpc.Step) {
		switch {
		case e.Err != nil:
			out = append(out, fmt.Sprintf("@%d error: %v", e.Seq, e.Err))
		// An ended call is shown at its EndSeq: where it ended, which for an
		// interrupted call cut off later is its socket's close.
		case e.Ended:
			call := e.Call
			s := fmt.Sprintf("@%d %s#%s %s chunks=%d acks=%d interrupted=%v", call.EndSeq, call.Method, call.ID, call.Outcome, call.Chunks, call.Acks, call.Interrupted)
			if call.Cause != nil {
				s += " cause=" + call.Cause.String()
			}
			if call.Reason != "" {
				s += " reason=" + call.Reason
			}
			out = append(out, s)
		}
	}, &effectrpc.Options{Path: "/ws"})
	evs := events(frames)
	for i := range evs {
		if evs[i].Kind == bundle.KindProcExit {
			c.ServerStopped(&evs[i])
			continue
		}
		c.Feed(&evs[i])
	}
	if len(evs) > 0 {
		c.End(&evs[len(evs)-1])
	}
	return out
}

func TestCorrelator(t *testing.T) {
	req := func(id, method string) frame {
		return frame(`>{"_tag":"Request","id":` + id + `,"tag":"` + method + `","payload":{"threadId":"t1"},"headers":[]}`)
	}
	tests := []struct {
		name   string
		frames []frame
		want   []string
	}{
		{
			name: "interleaved streams with acks, ids as numbers and strings",
			frames: []frame{"open /ws?orchestrationProtocol=2", req("0", "s"), req(`"1"`, "s"),
				`<{"_tag":"Chunk","requestId":"0","values":[1]}`, `<{"_tag":"Chunk","requestId":1,"values":[1]}`,
				`>{"_tag":"Ack","requestId":0}`, `>{"_tag":"Ack","requestId":"1"}`,
				`<{"_tag":"Chunk","requestId":0,"values":[2]}`,
				`<{"_tag":"Exit","requestId":1,"exit":{"_tag":"Success","value":null}}`,
				`<{"_tag":"Exit","requestId":0,"exit":{"_tag":"Success","value":null}}`},
			want: []string{"@9 s#1 success chunks=1 acks=1 interrupted=false", "@10 s#0 success chunks=2 acks=1 interrupted=false"},
		},
		{
			name: "interrupt ends with a v4 Interrupt cause",
			frames: []frame{"open /ws", req("3", "s"), `>{"_tag":"Interrupt","requestId":3}`,
				`<{"_tag":"Exit","requestId":3,"exit":{"_tag":"Failure","cause":[{"_tag":"Interrupt","fiberId":27}]}}`},
			want: []string{"@4 s#3 failure chunks=0 acks=0 interrupted=true cause=Interrupt 27"},
		},
		{
			name: "v3 cause tree",
			frames: []frame{"open /ws", req("3", "m"),
				`<{"_tag":"Exit","requestId":"3","exit":{"_tag":"Failure","cause":{"_tag":"Sequential","left":{"_tag":"Fail","error":{"_tag":"E"}},"right":{"_tag":"Parallel","left":{"_tag":"Die","defect":"x"},"right":{"_tag":"Interrupt","fiberId":{"id":1}}}}}}`},
			want: []string{`@3 m#3 failure chunks=0 acks=0 interrupted=false cause=Fail {"_tag":"E"}; Die "x"; Interrupt {"id":1}`},
		},
		{
			name:   "defect fails every pending call",
			frames: []frame{"open /ws", req("0", "a"), req("1", "b"), `<{"_tag":"Defect","defect":"bad json"}`},
			want:   []string{`@4 a#0 defect chunks=0 acks=0 interrupted=false reason=connection defect: "bad json"`, `@4 b#1 defect chunks=0 acks=0 interrupted=false reason=connection defect: "bad json"`},
		},
		{
			name: "array frame is one message per element",
			frames: []frame{"open /ws", `>[{"_tag":"Request","id":0,"tag":"a","payload":{},"headers":[]},{"_tag":"Request","id":1,"tag":"b","payload":{},"headers":[]}]`,
				`<[{"_tag":"Exit","requestId":1,"exit":{"_tag":"Success","value":1}},{"_tag":"Exit","requestId":0,"exit":{"_tag":"Success","value":2}}]`},
			want: []string{"@3 b#1 success chunks=0 acks=0 interrupted=false", "@3 a#0 success chunks=0 acks=0 interrupted=false"},
		},
		{
			name: "ndjson: several messages per frame, messages split across frames",
			frames: []frame{"open /ws", `>{"_tag":"Request","id":0,"tag":"s","payload":{},"headers":[]}\n{"_tag":"Pi`, `>ng"}\n`,
				`<{"_tag":"Chunk","requestId":0,"val`, `<ues":[1]}\n{"_tag":"Exit","requestId":0,"exit":{"_tag":"Success","value":null}}\n`},
			want: []string{"@5 s#0 success chunks=1 acks=0 interrupted=false"},
		},
		{
			name: "JSON-RPC 2.0 framing",
			frames: []frame{"open /ws", `>{"jsonrpc":"2.0","method":"s","params":{},"id":5}`, `<{"jsonrpc":"2.0","id":"5","chunk":true,"result":[1]}`,
				`>{"method":"@effect/rpc/Ack","params":{"requestId":5}}`, `<{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"nope"}}`},
			want: []string{`@5 s#5 failure chunks=1 acks=1 interrupted=false cause=Fail {"code":-1,"message":"nope"}`},
		},
		{
			name:   "calls open when the server stops have an unknown outcome",
			frames: []frame{"open /ws", req("0", "s"), `<{"_tag":"Chunk","requestId":0,"values":[1]}`, "stop"},
			want:   []string{"@4 s#0 unknown chunks=1 acks=0 interrupted=false reason=the server stopped"},
		},
		{
			name:   "calls open when the socket closes have an unknown outcome",
			frames: []frame{"open /ws", req("0", "s"), "close"},
			want:   []string{"@3 s#0 unknown chunks=0 acks=0 interrupted=false reason=the socket closed (1006)"},
		},
		{
			name: "the server still answers after the client closed its side",
			frames: []frame{"open /ws", req("0", "s"), `>{"_tag":"Interrupt","requestId":0}`, "client-close",
				`<{"_tag":"Exit","requestId":0,"exit":{"_tag":"Failure","cause":[{"_tag":"Interrupt","fiberId":7}]}}`},
			want: []string{"@5 s#0 failure chunks=0 acks=0 interrupted=true cause=Interrupt 7"},
		},
		{
			// Issue 8: the call ends at its connection's close, as
			// interrupted, not at the end of the bundle.
			name:   "an interrupted call the server never answers ends at the client's close",
			frames: []frame{"open /ws", req("0", "s"), req("1", "g"), `>{"_tag":"Interrupt","requestId":0}`, "client-close", `<{"_tag":"Pong"}`},
			want: []string{"@5 s#0 interrupted chunks=0 acks=0 interrupted=true reason=the client interrupted it and no Exit came before the socket closed (1000) and the bundle ended",
				"@6 g#1 unknown chunks=0 acks=0 interrupted=false reason=the socket closed (1000) and the bundle ended"},
		},
		{
			name:   "an interrupted call the server closes on ends there, as interrupted",
			frames: []frame{"open /ws", req("0", "s"), `>{"_tag":"Interrupt","requestId":0}`, "close"},
			want:   []string{"@4 s#0 interrupted chunks=0 acks=0 interrupted=true reason=the client interrupted it and no Exit came before the socket closed (1006)"},
		},
		{
			name: "an Interrupt that crossed its call's Exit is not an error",
			frames: []frame{"open /ws", req("0", "g"), `<{"_tag":"Exit","requestId":0,"exit":{"_tag":"Success","value":1}}`,
				`>{"_tag":"Interrupt","requestId":0}`, `>{"_tag":"Interrupt","requestId":5}`},
			want: []string{"@3 g#0 success chunks=0 acks=0 interrupted=false", "@5 error: Interrupt for id 5: no open call with this id"},
		},
		{
			name: "server messages recorded after the socket closed are late, not errors",
			frames: []frame{"open /ws", req("0", "s"), "close", `<{"_tag":"Chunk","requestId":0,"values":[1]}`,
				`<{"_tag":"Exit","requestId":0,"exit":{"_tag":"Success","value":null}}`},
			want: []string{"@3 s#0 unknown chunks=0 acks=0 interrupted=false reason=the socket closed (1006)"},
		},
		{
			name: "a Chunk after its call's own Exit is an error",
			frames: []frame{"open /ws", req("0", "g"), `<{"_tag":"Exit","requestId":0,"exit":{"_tag":"Success","value":1}}`,
				`<{"_tag":"Chunk","requestId":0,"values":[1]}`},
			want: []string{"@3 g#0 success chunks=0 acks=0 interrupted=false", "@4 error: Chunk for id 0: no open call with this id"},
		},
		{
			name:   "calls left open after the client closed end with the bundle",
			frames: []frame{"open /ws", req("0", "s"), "client-close"},
			want:   []string{"@3 s#0 unknown chunks=0 acks=0 interrupted=false reason=the socket closed (1000) and the bundle ended"},
		},
		{
			name:   "calls open at the end of the bundle have an unknown outcome",
			frames: []frame{"open /ws", req("0", "s")},
			want:   []string{"@2 s#0 unknown chunks=0 acks=0 interrupted=false reason=the bundle ended"},
		},
		{
			name:   "undecodable frames on the RPC socket are kept with their seq",
			frames: []frame{"open /ws", `<{"_tag":"Bogus"}`, `<{"_tag":"Exit","requestId":9,"exit":{"_tag":"Success"}}`, `<not json`},
			want:   []string{`@2 error: unknown message tag "Bogus"`, "@3 error: Exit for id 9: no open call with this id", "@4 error: invalid JSON"},
		},
		{
			name:   "a partial ndjson line left at the end is reported",
			frames: []frame{"open /ws", `<{"_tag":"Ping"}\n{"_tag":"Po`},
			want:   []string{"@2 error: incomplete message left when the bundle ended (started at seq 2)"},
		},
		{
			name:   "a message on the RPC socket that is neither JSON nor an ndjson line is not called incomplete",
			frames: []frame{"open /ws", `>hello`, `>there`, "close"},
			want:   []string{"@4 error: not an RPC message: what was sent from seq 2 on (10 bytes) is not JSON, and no newline ended it as an ndjson line before the socket closed (1006)"},
		},
		{
			name:   "text that is not JSON does not swallow the messages after it",
			frames: []frame{"open /ws", `<hello`, `<{"_tag":"Exit","requestId":9,"exit":{"_tag":"Success"}}`},
			want: []string{
				"@3 error: not an RPC message: what was sent from seq 2 on (5 bytes) is not JSON, and no newline ended it as an ndjson line before a whole JSON message came (seq 3)",
				"@3 error: Exit for id 9: no open call with this id",
			},
		},
		{
			name:   "a socket that is not RPC is ignored",
			frames: []frame{"open /events", `<hello`, `<{"x":1}`},
			want:   nil,
		},
		{
			name:   "any socket whose frames decode as RPC is RPC",
			frames: []frame{"open /other", req("0", "s"), `<{"_tag":"Exit","requestId":0,"exit":{"_tag":"Success","value":null}}`},
			want:   []string{"@3 s#0 success chunks=0 acks=0 interrupted=false"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, correlate(tt.frames)); diff != "" {
				t.Errorf("correlation (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeCause(t *testing.T) {
	tests := []struct {
		name, cause, want string
		interrupted       bool
	}{
		{"v4 flat", `[{"_tag":"Fail","error":{"_tag":"E"}},{"_tag":"Interrupt","fiberId":2}]`, `Fail {"_tag":"E"}; Interrupt 2`, false},
		{"v4 interrupt only", `[{"_tag":"Interrupt","fiberId":27}]`, "Interrupt 27", true},
		{"v3 empty", `{"_tag":"Empty"}`, "Empty", false},
		{"v3 nested", `{"_tag":"Parallel","left":{"_tag":"Interrupt","fiberId":{"id":1,"startTimeMillis":0}},"right":{"_tag":"Sequential","left":{"_tag":"Empty"},"right":{"_tag":"Interrupt","fiberId":{"id":2}}}}`, `Interrupt {"id":1,"startTimeMillis":0}; Interrupt {"id":2}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := effectrpc.DecodeCause([]byte(tt.cause))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c.String()); diff != "" {
				t.Errorf("cause (-want +got):\n%s", diff)
			}
			if c.Interrupted() != tt.interrupted {
				t.Errorf("Interrupted() = %v, want %v", c.Interrupted(), tt.interrupted)
			}
		})
	}
	if _, err := effectrpc.DecodeCause([]byte(`{"_tag":"Weird"}`)); err == nil || !strings.Contains(err.Error(), `unknown cause tag "Weird"`) {
		t.Errorf("unknown cause tag: err = %v, want one naming the tag", err)
	}
}
