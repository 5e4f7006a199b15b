package protocol_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
)

func TestStreamJSONDecoder(t *testing.T) {
	const (
		initReq  = `c2s {"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}`
		initOK   = `s2c {"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{}}}`
		userTurn = `c2s {"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}`
		sysInit  = `s2c {"type":"system","subtype":"init","session_id":"s"}`
		toolUse  = `s2c {"type":"assistant","message":{"content":[{"type":"text","text":"x"},{"type":"tool_use","id":"tu1","name":"Bash","input":{}}]}}`
		toolOK   = `s2c {"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu1","content":"ok","is_error":false}]}}`
		resultOK = `s2c {"type":"result","subtype":"success","is_error":false,"result":"done"}`
	)
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"good turn", []string{userTurn, sysInit, `s2c {"type":"assistant","message":{"content":[{"type":"text","text":"hello"}]}}`, resultOK},
			[]string{"1 request turn id=turn-1 call=open", "2 notification system id=", "3 notification assistant id=", "4 response turn id=turn-1 call=success"}},
		{"failed turn", []string{userTurn, `s2c {"type":"result","subtype":"error_during_execution","is_error":true}`},
			[]string{"1 request turn id=turn-1 call=open", "2 response turn id=turn-1 call=failure"}},
		{"a user message joins the open turn", []string{userTurn, userTurn, resultOK, userTurn},
			[]string{"1 request turn id=turn-1 call=open", "2 notification user id=", "3 response turn id=turn-1 call=success", "4 request turn id=turn-2 call=open", "99 end turn id=turn-2 call=unknown"}},
		{"a result the CLI started itself", []string{resultOK}, []string{"1 notification result id="}},
		{"control request and response", []string{initReq, initOK},
			[]string{`1 request initialize id="r1" call=open`, `2 response initialize id="r1" call=success`}},
		{"control error", []string{initReq, `s2c {"type":"control_response","response":{"subtype":"error","request_id":"r1","error":"no"}}`},
			[]string{`1 request initialize id="r1" call=open`, `2 response initialize id="r1" call=failure`}},
		{"the CLI asks too", []string{`s2c {"type":"control_request","request_id":"p1","request":{"subtype":"can_use_tool"}}`, `c2s {"type":"control_response","response":{"subtype":"success","request_id":"p1"}}`},
			[]string{`1 request can_use_tool id="p1" call=open`, `2 response can_use_tool id="p1" call=success`}},
		{"a response in the request's own direction answers nothing", []string{initReq, `c2s {"type":"control_response","response":{"subtype":"success","request_id":"r1"}}`},
			[]string{`1 request initialize id="r1" call=open`, `2 response  id="r1"`, `99 end initialize id="r1" call=unknown`}},
		{"tool_use and tool_result", []string{userTurn, toolUse, toolOK, resultOK},
			[]string{"1 request turn id=turn-1 call=open", `2 request tool_use Bash id="tu1" call=open`, `3 response tool_use Bash id="tu1" call=success`, "4 response turn id=turn-1 call=success"}},
		{"tool error", []string{toolUse, `s2c {"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu1","is_error":true}]}}`},
			[]string{`1 request tool_use Bash id="tu1" call=open`, `2 response tool_use Bash id="tu1" call=failure`}},
		{"orphan tool_result", []string{toolOK}, []string{`1 response  id="tu1"`}},
		{"tool_result answered twice", []string{toolUse, toolOK, toolOK},
			[]string{`1 request tool_use Bash id="tu1" call=open`, `2 response tool_use Bash id="tu1" call=success`, `3 response  id="tu1"`}},
		{"reused request_id", []string{initReq, initReq},
			[]string{`1 request initialize id="r1" call=open`, `2 request initialize id="r1" reused`, `99 end initialize id="r1" call=unknown`}},
		{"tool never returns", []string{toolUse}, []string{`1 request tool_use Bash id="tu1" call=open`, `99 end tool_use Bash id="tu1" call=unknown`}},
		{"garbage", []string{`s2c {"type":"assistant","message":{"con`}, []string{"1 decode-error  id= err"}},
		{"not an object", []string{`s2c 2.1.220 (Claude Code)`}, []string{"1 decode-error  id= err"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decodeWith(protocol.NewStreamJSONDecoder(), tc.lines...)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLooksLikeStreamJSON(t *testing.T) {
	for line, want := range map[string]bool{
		`{"type":"control_request","request_id":"1","request":{"subtype":"initialize"}}`: true,
		`{"type":"system","subtype":"init"}`:                                             true,
		`{"type":"result","subtype":"success"}`:                                          true,
		`{"type":"user","jsonrpc":"2.0"}`:                                                false,
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`:                                 false,
		`{"type":"other"}`:                                                               false,
		`2.1.220`:                                                                        false,
		``:                                                                               false,
	} {
		if got := protocol.LooksLikeStreamJSON([]byte(line)); got != want {
			t.Errorf("LooksLikeStreamJSON(%s) = %v, want %v", line, got, want)
		}
	}
}

// FuzzStreamJSON: any sequence of lines decodes without panicking, every
// response with a call names a call that was requested and is not open any
// more, and Stop leaves no call open.
func FuzzStreamJSON(f *testing.F) {
	f.Add(`{"type":"user","message":{"content":"hi"}}`, `{"type":"result","subtype":"success"}`)
	f.Add(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"B"}]}}`, `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a"}]}}`)
	f.Add(`{"type":"control_request","request_id":"1","request":{"subtype":"initialize"}}`, `{"type":"control_response","response":{"subtype":"success","request_id":"1"}}`)
	f.Add(`{"type":"control_request","request_id":{},"request":null}`, `{"type":"user","message":{"content":[1,{"type":"tool_result"}]}}`)
	f.Add(`{oops`, `[]`)
	f.Fuzz(func(t *testing.T, a, b string) {
		d := protocol.NewStreamJSONDecoder()
		var calls []*protocol.Call
		emit := func(ev *protocol.Event) {
			if ev.Kind == protocol.KindDecodeError && ev.Err == nil {
				t.Fatalf("decode error without an error: %+v", ev)
			}
			if ev.Call == nil {
				return
			}
			if ev.Kind == protocol.KindRequest {
				calls = append(calls, ev.Call)
			} else if ev.Call.Outcome == protocol.OutcomeOpen {
				t.Fatalf("%s left its call open: %+v", ev.Kind, ev.Call)
			}
		}
		for i, l := range []string{a, b, a, b} {
			dir := bundle.DirClientToServer
			if i%2 == 1 {
				dir = bundle.DirServerToClient
			}
			d.Feed(&bundle.Event{Seq: uint64(i + 1), Kind: bundle.KindStdioLine, Conn: "p", Dir: dir, Body: bundle.Text([]byte(l))}, emit)
		}
		d.Stop(&bundle.Event{Seq: 9}, "the bundle ended", emit)
		for _, c := range calls {
			if c.Outcome == protocol.OutcomeOpen {
				t.Fatalf("call open after Stop: %+v", c)
			}
		}
	})
}
