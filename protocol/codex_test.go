package protocol_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/protocol"
)

// codexArgv is the argv of a Codex app-server as verify's provider tap
// records it (the native binary, then T3's launch arguments).
var codexArgv = []string{"/opt/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex", "app-server"}

// transcript reads testdata/codex-app-server.txt: the real app-server's
// stdio lines ("c2s {...}" or "s2c {...}").
func transcript(t testing.TB) []string { return transcriptOf(t, "testdata/codex-app-server.txt") }

// transcriptOf reads the stdio lines of a transcript file.
func transcriptOf(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// channel is a provider channel as verify records it: proc.start with argv
// (none when argv is nil), a stdio.line per line ("c2s {...}"), then
// exit (nil: none).
func channel(argv []string, lines []string, exit *bundle.Event) []bundle.Event {
	var evs []bundle.Event
	if argv != nil {
		attrs, _ := json.Marshal(map[string]any{"argv": argv, "pid": 4242})
		evs = append(evs, bundle.Event{Kind: bundle.KindProcStart, Conn: "provider-1", Attrs: attrs})
	}
	for _, l := range lines {
		dir, body, _ := strings.Cut(l, " ")
		evs = append(evs, bundle.Event{Kind: bundle.KindStdioLine, Conn: "provider-1", Dir: bundle.Dir(dir), Body: bundle.Text([]byte(body))})
	}
	if exit != nil {
		e := *exit
		e.Kind, e.Conn = bundle.KindProcExit, "provider-1"
		evs = append(evs, e)
	}
	for i := range evs {
		evs[i].Seq = uint64(i + 1)
	}
	return evs
}

// routeChannel routes events as the engine does (stream-json first, then
// JSON-RPC) and describes each protocol event on one line; the router is
// stopped at seq 999 ("the bundle ended").
func routeChannel(evs []bundle.Event) []string {
	var out []string
	emit := func(ev *protocol.Event) {
		s := fmt.Sprintf("%d %s %s %s id=%s", ev.Seq, ev.Protocol, ev.Kind, ev.Method, ev.ID)
		if ev.Dialect != "" {
			s += " dialect=" + string(ev.Dialect)
		}
		if ev.Call != nil {
			s += " call=" + string(ev.Call.Outcome)
			if ev.Call.Chunks > 0 {
				s += fmt.Sprintf(" chunks=%d", ev.Call.Chunks)
			}
		}
		if ev.Reused {
			s += " reused"
		}
		if len(ev.Invalid) > 0 {
			s += " invalid: " + strings.Join(ev.Invalid, "; ")
		}
		if ev.Why != "" {
			s += " why=" + ev.Why
		}
		if ev.Unanswered {
			s += " unanswered"
		}
		out = append(out, s)
	}
	rpc := protocol.JSONRPCRoutes(protocol.NewJSONRPCDecoder())
	r := protocol.NewRouter([]protocol.Route{protocol.StreamJSONRoute(protocol.NewStreamJSONDecoder()), rpc[0], rpc[1]}, emit)
	for i := range evs {
		r.Feed(&evs[i])
	}
	r.Stop(&bundle.Event{Seq: 999}, "the bundle ended")
	return out
}

// TestCodexDialectReaderBuffers: a bundle.Reader's event holds its Attrs
// and Body.Data in buffers it reuses for the next event, and the router
// keeps a proc.start until the channel's first line: the dialect is decided
// from the argv as it was, not from the bytes of the line read after it.
func TestCodexDialectReaderBuffers(t *testing.T) {
	evs := channel([]string{"/opt/bin/codex", "app-server"}, transcript(t)[:2], nil)
	want := routeChannel(evs)
	var got []string
	rpc := protocol.JSONRPCRoutes(protocol.NewJSONRPCDecoder())
	r := protocol.NewRouter(rpc, func(ev *protocol.Event) {
		got = append(got, fmt.Sprintf("%d %s dialect=%s invalid=%q", ev.Seq, ev.Kind, ev.Dialect, ev.Invalid))
	})
	buf := make([]byte, 64<<10)
	for _, ev := range evs {
		// As Reader.Next: the event's bytes are in buf, which the next
		// event overwrites.
		for j := range buf {
			buf[j] = 'x'
		}
		n := copy(buf, ev.Attrs)
		m := copy(buf[n:], ev.Body.Data)
		ev.Attrs, ev.Body.Data = buf[:n:n], buf[n:n+m:n+m]
		r.Feed(&ev)
	}
	if len(got) != 2 || !strings.Contains(want[0], "dialect="+string(protocol.DialectCodex)) {
		t.Fatalf("decoded %q (from buffers of their own: %q)", got, want)
	}
	for _, g := range got {
		if !strings.Contains(g, "dialect="+string(protocol.DialectCodex)+" invalid=[]") {
			t.Errorf("%s: want the Codex dialect, valid", g)
		}
	}
}

// TestCodexTranscript decodes the real app-server's traffic: every message
// is valid in its dialect, the server's requests and Codex's approval
// request are answered, the turn and its three items (the user's message,
// the approved command, the agent's message with its delta) are calls that
// succeeded. The whole decode is held to a golden file.
func TestCodexTranscript(t *testing.T) {
	got := routeChannel(channel(codexArgv, transcript(t), &bundle.Event{Code: 0}))
	testkit.Golden(t, "testdata/codex-app-server.events", []byte(strings.Join(got, "\n")+"\n"))
	var calls []string
	for _, l := range got {
		if strings.Contains(l, "invalid") || strings.Contains(l, " end ") || strings.Contains(l, "reused") {
			t.Errorf("the real app-server's traffic is judged bad: %s", l)
		}
		if f := strings.Fields(l); len(f) > 2 && f[2] == "response" {
			calls = append(calls, strings.Join(f[1:], " "))
		}
	}
	want := []string{
		"jsonrpc response initialize id=1 dialect=codex-app-server call=success",
		"jsonrpc response thread/start id=2 dialect=codex-app-server call=success",
		"jsonrpc response turn/start id=3 dialect=codex-app-server call=success",
		"codex response item userMessage id=01a23230-f548-74b2-9836-399992f4cd42 call=success",
		"jsonrpc response item/commandExecution/requestApproval id=0 dialect=codex-app-server call=success",
		"codex response item commandExecution id=call_wp0238b233b9a21bffa8a6a7 call=success",
		"codex response item agentMessage id=msg_wp1c9e30607aea5aa81496f8 call=success chunks=1",
		"codex response turn id=01a23230-f523-71a0-b14d-568349ad94f5 call=success",
	}
	if d := cmp.Diff(want, calls); d != "" {
		t.Errorf("calls answered (-want +got):\n%s", d)
	}
}

// TestCodexInterruptTranscript decodes the real app-server interrupted
// mid-command (testdata/codex-app-server-interrupt.txt): turn/interrupt is
// answered, the turn completes interrupted, and the command item, which
// Codex never completes, ends interrupted with it; nothing is judged bad.
func TestCodexInterruptTranscript(t *testing.T) {
	got := routeChannel(channel(codexArgv, transcriptOf(t, "testdata/codex-app-server-interrupt.txt"), &bundle.Event{Code: 0}))
	testkit.Golden(t, "testdata/codex-app-server-interrupt.events", []byte(strings.Join(got, "\n")+"\n"))
	var ends []string
	for _, l := range got {
		if strings.Contains(l, "invalid") || strings.Contains(l, "reused") || strings.Contains(l, "unanswered") {
			t.Errorf("the real app-server's traffic is judged bad: %s", l)
		}
		// "seq protocol kind method... id=... [dialect=...] call=... [why=...]"
		head, why, _ := strings.Cut(l, " why=")
		f := strings.Fields(head)
		id := slices.IndexFunc(f, func(w string) bool { return strings.HasPrefix(w, "id=") })
		if id > 3 && (f[2] == "response" || f[2] == "end") && (f[1] == "codex" || f[3] == "turn/interrupt") {
			ends = append(ends, strings.Join(append(f[1:id:id], f[len(f)-1], why), " "))
		}
	}
	want := []string{
		"codex response item userMessage call=success ",
		"jsonrpc response turn/interrupt call=success ",
		"codex end item commandExecution call=interrupted the turn was interrupted before its item/completed",
		"codex response turn call=interrupted ",
	}
	if d := cmp.Diff(want, ends); d != "" {
		t.Errorf("calls ended (-want +got):\n%s", d)
	}
}

// TestCodexErrorTranscript: the real app-server's error answers
// (testdata/codex-app-server-errors.txt: a bad thread id, an unknown
// method, missing params, answered out of order) are valid in its dialect
// and fail their calls.
func TestCodexErrorTranscript(t *testing.T) {
	got := routeChannel(channel(codexArgv, transcriptOf(t, "testdata/codex-app-server-errors.txt"), &bundle.Event{Code: 0}))
	var answers []string
	for _, l := range got {
		if strings.Contains(l, "invalid") || strings.Contains(l, " end ") {
			t.Errorf("judged bad: %s", l)
		}
		if f := strings.Fields(l); f[2] == "response" {
			answers = append(answers, f[3]+" "+f[len(f)-1])
		}
	}
	want := []string{"initialize call=success", "no/such/method call=failure", "thread/start call=failure", "turn/start call=failure"}
	if d := cmp.Diff(want, answers); d != "" {
		t.Errorf("answers (-want +got):\n%s", d)
	}
}

// TestCodexDialectFromArgv: the same lines on a channel whose process is
// not a Codex app-server (or whose proc.start is missing) are JSON-RPC 2.0,
// and every message lacks its "jsonrpc" member.
func TestCodexDialectFromArgv(t *testing.T) {
	lines := transcript(t)[:2]
	for _, argv := range [][]string{nil, {"/usr/bin/mcp-server", "app-server"}, {"codex", "exec"}} {
		got := routeChannel(channel(argv, lines, nil))
		want := []string{
			`2 jsonrpc request initialize id=1 call=open invalid: no "jsonrpc" member (must be "2.0")`,
			`3 jsonrpc response initialize id=1 call=success invalid: no "jsonrpc" member (must be "2.0")`,
		}
		if argv == nil {
			want = []string{strings.Replace(want[0], "2 ", "1 ", 1), strings.Replace(want[1], "3 ", "2 ", 1)}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("argv %q (-want +got):\n%s", argv, d)
		}
	}
}

func TestIsCodexAppServer(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{codexArgv, true},
		{[]string{"codex", "app-server", "-c", "model=gpt-5"}, true},
		{[]string{"/usr/lib/node_modules/@openai/codex/bin/codex.js", "app-server"}, true},
		{[]string{"/bin/sh", "-c", "/opt/bin/codex app-server --strict-config"}, true},
		{[]string{"wireproof", "provider", "codex", "app-server"}, true},
		{[]string{"codex", "exec", "hello"}, false},
		{[]string{"app-server", "codex"}, false},
		{[]string{"claude", "--output-format", "stream-json"}, false},
		{nil, false},
	} {
		if got := protocol.IsCodexAppServer(c.argv); got != c.want {
			t.Errorf("IsCodexAppServer(%q) = %v, want %v", c.argv, got, c.want)
		}
	}
}

// TestCodexDialectRules: what the dialect forgives is the "jsonrpc" member
// alone; every other rule of JSON-RPC holds, each judged at the message (or
// the exit) that breaks it.
func TestCodexDialectRules(t *testing.T) {
	exit0 := &bundle.Event{Code: 0}
	tests := []struct {
		name  string
		lines []string
		exit  *bundle.Event
		want  []string
	}{
		{"neither request, notification nor response", []string{`c2s {"method":"initialized"}`, `s2c {"id":1}`}, exit0, []string{
			`2 jsonrpc notification initialized id= dialect=codex-app-server`,
			`3 jsonrpc response  id=1 dialect=codex-app-server invalid: neither "method", "result" nor "error"`}},
		{"a response to no request", []string{`s2c {"id":9,"result":{}}`}, exit0, []string{
			`2 jsonrpc response  id=9 dialect=codex-app-server`}}, // answers-request judges it (Call nil)
		{"an id reused while open", []string{`c2s {"id":1,"method":"thread/start","params":{}}`, `c2s {"id":1,"method":"turn/start","params":{}}`, `s2c {"id":1,"result":{}}`}, exit0, []string{
			`2 jsonrpc request thread/start id=1 dialect=codex-app-server call=open`,
			`3 jsonrpc request turn/start id=1 dialect=codex-app-server reused`,
			`4 jsonrpc response thread/start id=1 dialect=codex-app-server call=success`}},
		{"result and error together", []string{`c2s {"id":1,"method":"a"}`, `s2c {"id":1,"result":{},"error":{"code":-32600,"message":"no"}}`}, exit0, []string{
			`2 jsonrpc request a id=1 dialect=codex-app-server call=open`,
			`3 jsonrpc response a id=1 dialect=codex-app-server call=failure invalid: both "result" and "error" (exactly one is allowed)`}},
		{"a jsonrpc member must still say 2.0", []string{`c2s {"jsonrpc":"1.0","method":"initialized"}`, `c2s {"jsonrpc":"2.0","method":"initialized"}`}, exit0, []string{
			`2 jsonrpc notification initialized id= dialect=codex-app-server invalid: "jsonrpc" is "1.0", not "2.0"`,
			`3 jsonrpc notification initialized id= dialect=codex-app-server`}},
		{"an error without code", []string{`c2s {"id":1,"method":"a"}`, `s2c {"id":1,"error":{"message":"no"}}`}, exit0, []string{
			`2 jsonrpc request a id=1 dialect=codex-app-server call=open`,
			`3 jsonrpc response a id=1 dialect=codex-app-server call=failure invalid: "error.code" is absent, not an integer`}},
		{"Codex's request unanswered when it exits", []string{`s2c {"method":"item/commandExecution/requestApproval","id":0,"params":{"itemId":"call_1"}}`}, exit0, []string{
			`2 jsonrpc request item/commandExecution/requestApproval id=0 dialect=codex-app-server call=open`,
			`3 jsonrpc end item/commandExecution/requestApproval id=0 dialect=codex-app-server call=unknown why=the app-server exited with status 0 unanswered`}},
		{"the server's request unanswered when Codex fails", []string{`c2s {"id":3,"method":"turn/start","params":{}}`}, &bundle.Event{Code: 1, Err: "exit status 1"}, []string{
			`2 jsonrpc request turn/start id=3 dialect=codex-app-server call=open`,
			`3 jsonrpc end turn/start id=3 dialect=codex-app-server call=unknown why=the app-server exited with status 1 unanswered`}},
		{"killed: not judged", []string{`c2s {"id":3,"method":"turn/start","params":{}}`}, &bundle.Event{Code: -1, Name: "SIGTERM"}, []string{
			`2 jsonrpc request turn/start id=3 dialect=codex-app-server call=open`,
			`3 jsonrpc end turn/start id=3 dialect=codex-app-server call=unknown why=the app-server was killed by SIGTERM`}},
		{"the bundle ended: not judged", []string{`c2s {"id":3,"method":"turn/start","params":{}}`}, nil, []string{
			`2 jsonrpc request turn/start id=3 dialect=codex-app-server call=open`,
			`999 jsonrpc end turn/start id=3 dialect=codex-app-server call=unknown why=the bundle ended`}},
		{"an item open when its turn completes", []string{
			`s2c {"method":"turn/started","params":{"threadId":"t","turn":{"id":"u1","status":"inProgress"}}}`,
			`s2c {"method":"item/started","params":{"item":{"type":"agentMessage","id":"m1","text":""},"threadId":"t","turnId":"u1"}}`,
			`s2c {"method":"turn/completed","params":{"threadId":"t","turn":{"id":"u1","status":"completed"}}}`}, exit0, []string{
			`2 jsonrpc notification turn/started id= dialect=codex-app-server`,
			`2 codex request turn id=u1 call=open`,
			`3 jsonrpc notification item/started id= dialect=codex-app-server`,
			`3 codex request item agentMessage id=m1 call=open`,
			`4 jsonrpc notification turn/completed id= dialect=codex-app-server`,
			`4 codex end item agentMessage id=m1 call=unknown why=the turn completed without its item/completed`,
			`4 codex response turn id=u1 call=success`}},
		{"a failed turn and a declined item; one open at the exit", []string{
			`s2c {"method":"turn/started","params":{"turn":{"id":"u1"}}}`,
			`s2c {"method":"item/started","params":{"item":{"type":"commandExecution","id":"c1"},"turnId":"u1"}}`,
			`s2c {"method":"item/commandExecution/outputDelta","params":{"itemId":"c1","delta":"x"}}`,
			`s2c {"method":"item/completed","params":{"item":{"type":"commandExecution","id":"c1","status":"declined"},"turnId":"u1"}}`,
			`s2c {"method":"turn/completed","params":{"turn":{"id":"u1","status":"failed"}}}`,
			`s2c {"method":"turn/started","params":{"turn":{"id":"u2"}}}`}, exit0, []string{
			`2 jsonrpc notification turn/started id= dialect=codex-app-server`,
			`2 codex request turn id=u1 call=open`,
			`3 jsonrpc notification item/started id= dialect=codex-app-server`,
			`3 codex request item commandExecution id=c1 call=open`,
			`4 jsonrpc notification item/commandExecution/outputDelta id= dialect=codex-app-server`,
			`4 codex chunk item commandExecution id=c1 call=open chunks=1`,
			`5 jsonrpc notification item/completed id= dialect=codex-app-server`,
			`5 codex response item commandExecution id=c1 call=failure chunks=1`,
			`6 jsonrpc notification turn/completed id= dialect=codex-app-server`,
			`6 codex response turn id=u1 call=failure`,
			`7 jsonrpc notification turn/started id= dialect=codex-app-server`,
			`7 codex request turn id=u2 call=open`,
			`8 codex end turn id=u2 call=unknown why=the app-server exited with status 0`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := routeChannel(channel(codexArgv, tt.lines, tt.exit))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// FuzzCodexAppServer: whatever lines a Codex app-server's channel carries,
// the decoder does not panic, every call event names its call, a chunk or
// an answer belongs to a call opened before it, and at the exit nothing is
// left open.
func FuzzCodexAppServer(f *testing.F) {
	lines := transcript(f)
	f.Add(lines[0], lines[1], lines[13])
	f.Add(`s2c {"method":"item/started","params":{"item":{"id":"x","type":"t"}}}`, `s2c {"method":"item/agentMessage/delta","params":{"itemId":"x","delta":"a"}}`, `s2c {"method":"item/completed","params":{"item":{"id":"x"}}}`)
	f.Add(`s2c {"method":"turn/started","params":{"turn":{"id":1}}}`, `c2s [{"id":1}]`, `s2c {"method":"turn/completed","params":{"turn":null}}`)
	f.Fuzz(func(t *testing.T, a, b, c string) {
		evs := channel(codexArgv, nil, nil)
		for _, l := range []string{a, b, c} {
			dir, body, _ := strings.Cut(l, " ")
			if dir != string(bundle.DirClientToServer) {
				dir = string(bundle.DirServerToClient)
			}
			evs = append(evs, bundle.Event{Kind: bundle.KindStdioLine, Conn: "provider-1", Dir: bundle.Dir(dir), Body: bundle.Text([]byte(body))})
		}
		evs = append(evs, bundle.Event{Kind: bundle.KindProcExit, Conn: "provider-1"})
		for i := range evs {
			evs[i].Seq = uint64(i + 1)
		}
		exit := evs[len(evs)-1].Seq
		open := map[*protocol.Call]bool{}
		emit := func(ev *protocol.Event) {
			switch ev.Kind {
			case protocol.KindRequest:
				if ev.Call != nil {
					open[ev.Call] = true
				}
			case protocol.KindChunk, protocol.KindEnd:
				if ev.Call == nil || !open[ev.Call] {
					t.Fatalf("%s at %d of no open call", ev.Kind, ev.Seq)
				}
			case protocol.KindResponse:
				if ev.Protocol == protocol.Codex && (ev.Call == nil || !open[ev.Call]) {
					t.Fatalf("a codex response at %d of no open call", ev.Seq)
				}
			}
			if (ev.Kind == protocol.KindResponse || ev.Kind == protocol.KindEnd) && ev.Call != nil {
				if ev.Call.Outcome == protocol.OutcomeOpen || ev.Call.EndSeq != ev.Seq {
					t.Fatalf("%s at %d leaves its call %s, ended at %d", ev.Kind, ev.Seq, ev.Call.Outcome, ev.Call.EndSeq)
				}
				delete(open, ev.Call)
			}
			if ev.Kind == protocol.KindEnd && ev.Seq != exit {
				if ev.Protocol != protocol.Codex || !strings.Contains(ev.Why, "turn completed") {
					t.Fatalf("an end at %d before the exit: %+v", ev.Seq, ev)
				}
			}
		}
		rpc := protocol.JSONRPCRoutes(protocol.NewJSONRPCDecoder())
		r := protocol.NewRouter([]protocol.Route{rpc[0]}, emit)
		for i := range evs {
			r.Feed(&evs[i])
		}
		for call := range open {
			if call.Outcome == protocol.OutcomeOpen {
				t.Fatalf("call %s %s still open after the exit", call.Method, call.ID)
			}
		}
	})
}

// FuzzIsCodexAppServer: an argv decides the same as its words joined into
// one shell string, and one naming no codex word is never the app-server.
func FuzzIsCodexAppServer(f *testing.F) {
	f.Add("/opt/bin/codex", "app-server", "--strict-config")
	f.Add("sh", "-c", "codex app-server")
	f.Add("codex", "exec", "app-server")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		argv := []string{a, b, c}
		got := protocol.IsCodexAppServer(argv)
		if joined := protocol.IsCodexAppServer([]string{strings.Join(argv, " ")}); joined != got {
			t.Errorf("%q: %v, joined %v", argv, got, joined)
		}
		if got && !strings.Contains(strings.ToLower(strings.Join(argv, " ")), "codex") {
			t.Errorf("%q names no codex, yet is the app-server", argv)
		}
	})
}

// TestCodexExitWhileServerStopping: an app-server that exits while the
// server is being stopped (T3 closes its stdin on SIGTERM) leaves its
// calls to the stop, not unanswered; once the server has stopped (Stop),
// the next app-server's exit is its own again.
func TestCodexExitWhileServerStopping(t *testing.T) {
	var got []string
	emit := func(ev *protocol.Event) {
		if ev.Kind == protocol.KindEnd {
			got = append(got, fmt.Sprintf("%d %s unanswered=%v why=%s", ev.Seq, ev.Method, ev.Unanswered, ev.Why))
		}
	}
	rpc := protocol.JSONRPCRoutes(protocol.NewJSONRPCDecoder())
	r := protocol.NewRouter(rpc, emit)
	feed := func(evs []bundle.Event, base uint64) {
		for i := range evs {
			evs[i].Seq += base
			r.Feed(&evs[i])
		}
	}
	open := []string{`c2s {"id":3,"method":"turn/start","params":{}}`}
	feed(channel(codexArgv, open, nil), 0)
	r.ServerStopping(&bundle.Event{Seq: 10, Kind: bundle.KindProcSignal, Conn: "server", Name: "SIGTERM"})
	feed([]bundle.Event{{Seq: 11, Kind: bundle.KindProcExit, Conn: "provider-1"}}, 0)
	r.Stop(&bundle.Event{Seq: 12, Kind: bundle.KindProcExit, Conn: "server"}, "the server stopped")
	feed(channel(codexArgv, open, &bundle.Event{Code: 0}), 20)
	want := []string{
		"11 turn/start unanswered=false why=the app-server exited with status 0 while the server was being stopped",
		"23 turn/start unanswered=true why=the app-server exited with status 0",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ends (-want +got):\n%s", d)
	}
}

// TestCutLinesJoined: a line the recorder cut at its cap (pieces marked
// {"partial":true}, as a real app-server's item/completed of 1.05 MB for a
// command that printed 2.1 MB was) is decoded whole at the event that ends
// it, by the JSON-RPC and the stream-json decoder, while the other
// direction's lines interleave with its pieces.
func TestCutLinesJoined(t *testing.T) {
	long := strings.Repeat("wp-big-", 40)
	piece := func(seq uint64, dir bundle.Dir, s string, partial bool) bundle.Event {
		ev := bundle.Event{Seq: seq, Kind: bundle.KindStdioLine, Conn: "provider-1", Dir: dir, Body: bundle.Text([]byte(s))}
		if partial {
			ev.Attrs = json.RawMessage(`{"partial":true}`)
		}
		return ev
	}
	c2s, s2c := bundle.DirClientToServer, bundle.DirServerToClient
	for _, tc := range []struct {
		name   string
		route  protocol.Route
		first  string
		line   string
		wantAt string
	}{
		{"jsonrpc", protocol.JSONRPCRoutes(protocol.NewJSONRPCDecoder())[0], `{"jsonrpc":"2.0","id":1,"method":"turn/start","params":{}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"output":"` + long + `"}}`, "5 jsonrpc response turn/start"},
		{"stream-json", protocol.StreamJSONRoute(protocol.NewStreamJSONDecoder()), `{"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}`,
			`{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"text":"` + long + `"}}}`, "5 stream-json response initialize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.line[:50], tc.line[50:120]
			evs := []bundle.Event{
				piece(1, c2s, tc.first, false),
				piece(2, s2c, a, true),
				piece(3, c2s, `{"jsonrpc":"2.0","method":"initialized"}`, false),
				piece(4, s2c, b, true),
				piece(5, s2c, tc.line[120:], false),
			}
			var got []string
			r := protocol.NewRouter([]protocol.Route{tc.route}, func(ev *protocol.Event) {
				s := fmt.Sprintf("%d %s %s %s", ev.Seq, ev.Protocol, ev.Kind, ev.Method)
				if ev.Kind == protocol.KindDecodeError || len(ev.Invalid) > 0 {
					t.Errorf("%s: %v %v", s, ev.Err, ev.Invalid)
				}
				if ev.Kind == protocol.KindResponse {
					got = append(got, s)
					if !bytes.Contains(ev.Body, []byte(long)) {
						t.Errorf("the answer's body is not the whole line: %.80s", ev.Body)
					}
				}
			})
			for i := range evs {
				r.Feed(&evs[i])
			}
			if d := cmp.Diff([]string{tc.wantAt}, got); d != "" {
				t.Errorf("answers (-want +got):\n%s", d)
			}
		})
	}
}

// FuzzCutLines: a message cut into pieces anywhere decodes as the whole
// message does, at the event of its last piece.
func FuzzCutLines(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":"yyyyyyyy"}}`, uint8(3), uint8(20))
	f.Add(`{"jsonrpc":"2.0","id":1,"result":{}}`, uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, line string, a, b uint8) {
		i, j := min(int(a), len(line)), min(int(b), len(line))
		if i > j {
			i, j = j, i
		}
		describe := func(evs []bundle.Event) []string {
			var out []string
			d := protocol.NewJSONRPCDecoder()
			for k := range evs {
				d.Feed(&evs[k], func(ev *protocol.Event) {
					out = append(out, fmt.Sprintf("%s %s %s %v", ev.Kind, ev.Method, ev.ID, ev.Invalid))
				})
			}
			return out
		}
		whole := describe([]bundle.Event{{Seq: 1, Kind: bundle.KindStdioLine, Conn: "s", Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(line))}})
		partial := json.RawMessage(`{"partial":true}`)
		cut := describe([]bundle.Event{
			{Seq: 1, Kind: bundle.KindStdioLine, Conn: "s", Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(line[:i])), Attrs: partial},
			{Seq: 2, Kind: bundle.KindStdioLine, Conn: "s", Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(line[i:j])), Attrs: partial},
			{Seq: 3, Kind: bundle.KindStdioLine, Conn: "s", Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(line[j:]))},
		})
		if d := cmp.Diff(whole, cut); d != "" {
			t.Errorf("cut at %d and %d (-whole +cut):\n%s", i, j, d)
		}
	})
}
