package synth

import (
	"encoding/json"
	"strings"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
)

// Codex app-server faults: the stdio of a Codex CLI's app-server (the
// JSON-RPC dialect without "jsonrpc") broken in one way, each failing one
// conformance check.
const (
	CodexFine       = ""                         // the server's requests and Codex's approval request answered
	CodexUnanswered = "codex-unanswered-request" // the server never answers Codex's approval request; Codex exits (status 0)
	CodexBadMessage = "codex-result-and-error"   // Codex answers turn/start with both result and error
	CodexOrphan     = "codex-orphan-answer"      // the server answers an approval Codex never asked for
	CodexReusedID   = "codex-reused-id"          // the server sends turn/start with thread/start's id while it is open
)

// CodexChecks names the check each Codex fault fails.
var CodexChecks = map[string]string{
	CodexUnanswered: assert.CheckJSONRPCAnswered,
	CodexBadMessage: assert.CheckJSONRPCEnvelope,
	CodexOrphan:     assert.CheckAnswersRequest,
	CodexReusedID:   assert.CheckIDNotReused,
}

// CodexArgv is the argv of the Codex app-server of CodexChannel, as verify's
// provider tap records it.
var CodexArgv = []string{"/opt/codex/bin/codex", "app-server"}

// codexLines are the stdio lines of one turn of a real Codex 0.169.0
// app-server (protocol/testdata/codex-app-server.txt, trimmed: fewer
// notifications and fields): the server's initialize, initialized,
// thread/start and turn/start on stdin; Codex's answers, its turn and item
// notifications and a command approval request (id 0) on stdout, answered
// on stdin.
var codexLines = []string{
	`c2s {"id":1,"method":"initialize","params":{"capabilities":{"experimentalApi":true},"clientInfo":{"name":"t3code_desktop","title":"T3 Code Desktop","version":"0.1.0"}}}`,
	`s2c {"id":1,"result":{"userAgent":"t3code_desktop/0.169.0","platformFamily":"unix","platformOs":"linux"}}`,
	`c2s {"method":"initialized"}`,
	`c2s {"id":2,"method":"thread/start","params":{"cwd":"/work/project","model":"gpt-5-codex"}}`,
	`s2c {"id":2,"result":{"thread":{"id":"thread-codex-0001","modelProvider":"wp","model":"gpt-5-codex","status":{"type":"idle"}}}}`,
	`s2c {"method":"thread/started","params":{"thread":{"id":"thread-codex-0001"}}}`,
	`c2s {"id":3,"method":"turn/start","params":{"threadId":"thread-codex-0001","approvalPolicy":"untrusted","input":[{"type":"text","text":"Run curl --fail --silent ` + GateURL + `","text_elements":[]}]}}`,
	`s2c {"id":3,"result":{"turn":{"id":"turn-codex-0001","items":[],"status":"inProgress","error":null}}}`,
	`s2c {"method":"turn/started","params":{"threadId":"thread-codex-0001","turn":{"id":"turn-codex-0001","status":"inProgress"}}}`,
	`s2c {"method":"item/started","params":{"item":{"type":"commandExecution","id":"call_synth0001","command":"/bin/bash -lc 'curl --fail --silent ` + GateURL + `'","status":"inProgress"},"threadId":"thread-codex-0001","turnId":"turn-codex-0001"}}`,
	`s2c {"method":"item/commandExecution/requestApproval","id":0,"params":{"kind":"command","threadId":"thread-codex-0001","turnId":"turn-codex-0001","itemId":"call_synth0001","availableDecisions":["accept","cancel"]}}`,
	`c2s {"id":0,"result":{"decision":"accept"}}`,
	`s2c {"method":"serverRequest/resolved","params":{"threadId":"thread-codex-0001","requestId":0}}`,
	`s2c {"method":"item/completed","params":{"item":{"type":"commandExecution","id":"call_synth0001","status":"completed","exitCode":0},"threadId":"thread-codex-0001","turnId":"turn-codex-0001"}}`,
	`s2c {"method":"item/started","params":{"item":{"type":"agentMessage","id":"msg_synth0001","text":""},"threadId":"thread-codex-0001","turnId":"turn-codex-0001"}}`,
	`s2c {"method":"item/agentMessage/delta","params":{"threadId":"thread-codex-0001","turnId":"turn-codex-0001","itemId":"msg_synth0001","delta":"` + Secret + `"}}`,
	`s2c {"method":"item/completed","params":{"item":{"type":"agentMessage","id":"msg_synth0001","text":"` + Secret + `"},"threadId":"thread-codex-0001","turnId":"turn-codex-0001"}}`,
	`s2c {"method":"turn/completed","params":{"threadId":"thread-codex-0001","turn":{"id":"turn-codex-0001","status":"completed","error":null}}}`,
}

// CodexChannel returns the events of a Codex app-server's stdio channel
// conn as verify records it (proc.start with its argv, a stdio.line per
// line, proc.exit with status 0), broken by fault (CodexChecks); it also
// returns the index of the event where the fault's check fails (-1 for
// CodexFine).
func CodexChannel(conn, fault string) ([]bundle.Event, int) {
	attrs, _ := json.Marshal(map[string]any{"argv": CodexArgv, "pid": 4300})
	evs := []bundle.Event{{Kind: bundle.KindProcStart, Conn: conn, Attrs: attrs}}
	at := -1
	for _, l := range codexLines {
		if fault == CodexUnanswered && l == `c2s {"id":0,"result":{"decision":"accept"}}` {
			break // the server never answers; its stdin closes, and Codex exits
		}
		switch {
		case fault == CodexBadMessage && strings.HasPrefix(l, `s2c {"id":3,`):
			l = `s2c {"id":3,"result":{"turn":{"id":"turn-codex-0001"}},"error":{"code":-32603,"message":"turn failed"}}`
			at = len(evs)
		case fault == CodexOrphan && strings.HasPrefix(l, `c2s {"id":0,`):
			l = `c2s {"id":7,"result":{"decision":"accept"}}`
			at = len(evs)
		case fault == CodexReusedID && strings.HasPrefix(l, `s2c {"id":2,`):
			l = `c2s {"id":2,"method":"turn/start","params":{"threadId":"thread-codex-0001","input":[]}}`
			at = len(evs)
			dir, body, _ := strings.Cut(l, " ")
			evs = append(evs, bundle.Event{Kind: bundle.KindStdioLine, Conn: conn, Dir: bundle.Dir(dir), Body: bundle.Text([]byte(body))})
			l = `s2c {"id":2,"result":{"thread":{"id":"thread-codex-0001"}}}`
		}
		dir, body, _ := strings.Cut(l, " ")
		evs = append(evs, bundle.Event{Kind: bundle.KindStdioLine, Conn: conn, Dir: bundle.Dir(dir), Body: bundle.Text([]byte(body))})
	}
	if fault == CodexUnanswered {
		at = len(evs)
	}
	return append(evs, bundle.Event{Kind: bundle.KindProcExit, Conn: conn, Code: 0}), at
}

// codexChannel adds a Codex app-server's channel (CodexChannel), labelling
// where fault's check fails.
func (b *builder) codexChannel(fault string) {
	evs, at := CodexChannel("provider-codex-1", fault)
	for i, ev := range evs {
		if seq := b.add(ev); i == at {
			b.label(LabelFault, seq)
		}
	}
}

// codexFault breaks the run's protocol with a Codex app-server's channel
// beside it, broken by fault (CodexChannel).
func codexFault(fault string) Fault {
	return Fault{Check: CodexChecks[fault], At: LabelFault, breakAt: "delegated", breaks: func(b *builder) { b.codexChannel(fault) }}
}
