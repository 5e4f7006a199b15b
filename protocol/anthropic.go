package protocol

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/model/openai"
)

// Anthropic's Messages API over HTTP, as the Claude CLI calls its model, is
// decoded from the HTTP exchanges the HTTP decoder sees: a POST to
// /v1/messages (any query, such as ?beta=true) or /v1/messages/count_tokens
// is a model call (Protocol Anthropic), its request the body's conversation,
// its answer the message a text/event-stream body's events assemble into
// (anthropic.Assembler, which names each break of the event grammar), or
// the application/json body (a message, a token count, or an error in the
// API's shape). The HTTP exchange stays an HTTP call as well.
//
// A model call's Request event (at the end of its body) and its Response
// event (at the end of the exchange) carry what the checks judge in Model.
// Across calls the decoder remembers the ids of the messages and tool_use
// blocks answered whole, so that an id answered twice is seen, and matches
// each tool_use to the tool_result of the first later request that answers
// it (ModelCall.Answers): a few strings per answer, for the bundle.

// Model call methods (Event.Method, Call.Method).
const (
	MethodMessages    = "messages"
	MethodCountTokens = "count_tokens"
	// MethodResponses: OpenAI's Responses API, POST /v1/responses (the
	// Codex CLI's model calls; Protocol OpenAI, responses.go).
	MethodResponses = "responses"
)

// maxModelBody caps a buffered model request or JSON answer body.
const maxModelBody = 32 << 20

// ModelCall is what the decoder found in a model call. On the Request event
// the request's fields are set; on the Response event all of them.
type ModelCall struct {
	Path   string // /v1/messages or /v1/messages/count_tokens
	Stream bool   // the request asked for a stream
	Model  string // the request's model
	// Messages and Tools count the request's messages and tools.
	Messages, Tools int
	// RequestErr says why the request could not be read (not JSON, not a
	// Messages request, not recorded whole); its checks are then not run.
	RequestErr string
	// Unanswered lists how the request's conversation breaks the tool
	// protocol: a tool_use not answered by exactly one tool_result in the
	// message that follows it, or a tool_result for no tool_use of the
	// message before it.
	Unanswered []string
	// Answers are the tool_results of the request that answer a tool_use of
	// an earlier answer of the bundle (each matched once: at the first
	// request that carries it), in message order.
	Answers []ToolAnswer

	// Status is the HTTP status of the answer (0: none came).
	Status int
	// Message is the answer: assembled from the stream, or the JSON body.
	Message *anthropic.Response
	// Response is a Responses API answer (Protocol OpenAI), as Message is
	// a Messages API one.
	Response *openai.Response
	// APIError is an error the API answered: the body of a non-2xx answer
	// or a stream's error event.
	APIError *anthropic.ErrorBody
	// Problems are the breaks of the event grammar, in stream order.
	Problems []*anthropic.StreamError
	// Complete: a streamed answer reached message_stop. Cut: the recording
	// of the answer is not whole (the recorder's cap), so its completeness
	// and content are not judged.
	Complete, Cut bool
	// ClientGone: the client hung up, or could no longer be written to,
	// before the answer ended (the recorder's http.end err begins
	// "client: "), so an answer left unfinished is the client's doing, not
	// the model's.
	ClientGone bool
	// Unoffered lists the tool_use blocks of the answer that name a tool the
	// request does not offer.
	Unoffered []string
	// Reused lists ids of the answer (its message id, its tool_use ids) that
	// an earlier answer already had.
	Reused []string
	// CassetteMiss: the answer is a model cassette's miss (the response
	// header CassetteHeader is "miss", package model/cassette): the server
	// sent the model something the cassette never saw.
	CassetteMiss bool
}

// ClientGonePrefix begins the err of an http.end whose body the client
// stopped taking (package record): it hung up, or a write to it failed.
const ClientGonePrefix = "client: "

// CassetteHeader is the response header a model cassette (package
// model/cassette) sets: "played" on a recorded answer, "miss" on the API
// error that answers a request it has no recording of.
const CassetteHeader = "X-Wireproof-Cassette"

// ToolAnswer is a tool_result matched to the tool_use it answers, which an
// earlier model call's answer made.
type ToolAnswer struct {
	ToolUseID, Name string
	// Protocol is the API of the answer that made the call: Anthropic (a
	// tool_use) or OpenAI (a function_call).
	Protocol Name
	UseConn  string // the model call whose answer called the tool
	UseSeq   uint64 // the end of that answer
	IsError  bool
}

// modelCalls is the HTTP decoder's Anthropic side: the ids answered so far,
// and the tool_use blocks of whole answers not yet answered by a request.
type modelCalls struct {
	ids     map[string]uint64     // message and tool_use ids of whole answers, with the seq that answered them
	pending map[string]ToolAnswer // tool_use id -> the call that made it, until a request answers it
}

// modelExchange is the model side of one HTTP exchange.
type modelExchange struct {
	calls    *modelCalls
	call     *Call
	facts    ModelCall
	req      *anthropic.Request
	reqBody  []byte
	reqLeft  int64 // body bytes still to come (Content-Length), -1 unknown
	reqDone  bool
	tooBig   bool
	sse      bool
	asm      *anthropic.Assembler
	oreq     *openai.Request   // a Responses request
	oasm     *openai.Assembler // a Responses stream
	resJSON  bool
	resBody  []byte
	resLarge bool
}

// isModelPath reports whether a request is a model call.
func isModelPath(method, path string) (string, bool) {
	if method != http.MethodPost {
		return "", false
	}
	switch path {
	case "/v1/messages":
		return MethodMessages, true
	case "/v1/messages/count_tokens":
		return MethodCountTokens, true
	case "/v1/responses":
		return MethodResponses, true
	}
	return "", false
}

// open starts the model side of an exchange whose request is a model call;
// nil for any other.
func (d *modelCalls) open(ev *bundle.Event, path string, reqLeft int64) *modelExchange {
	method, ok := isModelPath(ev.Method, path)
	if !ok {
		return nil
	}
	proto := Anthropic
	if method == MethodResponses {
		proto = OpenAI
	}
	return &modelExchange{calls: d, reqLeft: reqLeft, facts: ModelCall{Path: path},
		call: &Call{Protocol: proto, Conn: ev.Conn, ID: ev.Conn, Method: method, Dir: bundle.DirClientToServer, RequestSeq: ev.Seq, Outcome: OutcomeOpen}}
}

// requestBytes takes a chunk of the request body; at its Content-Length the
// request is decoded.
func (m *modelExchange) requestBytes(ev *bundle.Event, emit Emit) {
	if m.reqDone {
		return
	}
	if len(m.reqBody)+len(ev.Body.Data) > maxModelBody {
		m.tooBig = true
	} else {
		m.reqBody = append(m.reqBody, ev.Body.Data...)
	}
	if m.reqLeft >= 0 {
		if m.reqLeft -= int64(len(ev.Body.Data)); m.reqLeft <= 0 {
			m.requestDone(ev, emit)
		}
	}
}

// requestDone decodes the request, once its body is whole or the response
// began or the exchange ended, and emits the call's Request event.
func (m *modelExchange) requestDone(at *bundle.Event, emit Emit) {
	if m.reqDone {
		return
	}
	m.reqDone = true
	body := m.reqBody
	m.reqBody = nil
	f := &m.facts
	switch {
	case m.tooBig:
		f.RequestErr = fmt.Sprintf("the request body is over %d bytes", maxModelBody)
	case m.reqLeft > 0:
		f.RequestErr = "the request body was not recorded whole"
	case m.call.Method == MethodResponses:
		m.responsesRequest(body)
	default:
		var req anthropic.Request
		if err := json.Unmarshal(body, &req); err != nil {
			f.RequestErr = "the request body is not a Messages request: " + err.Error()
			break
		}
		m.req = &req
		f.Stream, f.Model, f.Messages, f.Tools = req.Stream, req.Model, len(req.Messages), len(req.Tools)
		f.Unanswered = toolProtocol(req.Messages)
		f.Answers = m.calls.answers(req.Messages)
	}
	if m.call.Method == MethodCountTokens {
		f.Stream = false
	}
	facts := *f
	emit(&Event{Seq: at.Seq, T: at.T, Conn: m.call.Conn, Dir: bundle.DirClientToServer, Protocol: m.call.Protocol, Kind: KindRequest,
		ID: m.call.ID, Method: m.call.Method, Call: m.call, Body: body, Model: &facts})
}

// answers matches the tool_results of msgs to the pending tool_use blocks
// they answer.
func (d *modelCalls) answers(msgs []anthropic.Message) []ToolAnswer {
	if len(d.pending) == 0 {
		return nil
	}
	var out []ToolAnswer
	for _, m := range msgs {
		if m.Role != anthropic.RoleUser {
			continue
		}
		for _, b := range m.Content {
			if a, ok := d.pending[b.ToolUseID]; ok && b.Type == anthropic.BlockToolResult {
				delete(d.pending, b.ToolUseID)
				a.IsError = b.IsError
				out = append(out, a)
			}
		}
	}
	return out
}

// toolProtocol lists how messages break the tool protocol: every tool_use
// of an assistant message is answered by exactly one tool_result in the
// message that follows it, and a tool_result answers a tool_use of the
// message before it. The last message is not judged for its answers (the
// request is the conversation so far).
func toolProtocol(msgs []anthropic.Message) []string {
	var out []string
	for k, m := range msgs {
		var used []anthropic.Block
		if m.Role == anthropic.RoleAssistant {
			for _, b := range m.Content {
				if b.Type == anthropic.BlockToolUse {
					used = append(used, b)
				}
			}
		}
		answered := map[string]int{}
		if k+1 < len(msgs) {
			for _, b := range msgs[k+1].Content {
				if b.Type == anthropic.BlockToolResult && msgs[k+1].Role == anthropic.RoleUser {
					answered[b.ToolUseID]++
				}
			}
		}
		for _, u := range used {
			if k+1 < len(msgs) && answered[u.ID] != 1 {
				out = append(out, fmt.Sprintf("tool_use %s (%s) of message %d has %d tool_results in message %d", u.ID, u.Name, k, answered[u.ID], k+1))
			}
		}
		if m.Role != anthropic.RoleUser {
			continue
		}
		prev := map[string]bool{}
		if k > 0 && msgs[k-1].Role == anthropic.RoleAssistant {
			for _, b := range msgs[k-1].Content {
				if b.Type == anthropic.BlockToolUse {
					prev[b.ID] = true
				}
			}
		}
		for _, b := range m.Content {
			if b.Type == anthropic.BlockToolResult && !prev[b.ToolUseID] {
				out = append(out, fmt.Sprintf("tool_result of message %d answers %s, which message %d did not use", k, b.ToolUseID, k-1))
			}
		}
	}
	return out
}

// response takes the answer's head.
func (m *modelExchange) response(ev *bundle.Event) {
	m.facts.Status = ev.Status
	m.facts.CassetteMiss = ev.Header.Get(CassetteHeader) == "miss"
	mt, _, _ := mime.ParseMediaType(ev.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream" && ev.Status < 300 && m.call.Method == MethodResponses:
		m.sse, m.oasm = true, openai.NewAssembler()
	case mt == "text/event-stream" && ev.Status < 300:
		m.sse, m.asm = true, anthropic.NewAssembler()
	default:
		m.resJSON = true
	}
}

// event takes one server-sent event of a streamed answer.
func (m *modelExchange) event(name string, data []byte) {
	if m.oasm != nil {
		if p := m.oasm.Feed(name, data); p != nil {
			m.facts.Problems = append(m.facts.Problems, p)
		}
		return
	}
	if m.asm == nil {
		return
	}
	if err := m.asm.Feed(name, data); err != nil {
		if se, ok := err.(*anthropic.StreamError); ok {
			m.facts.Problems = append(m.facts.Problems, se)
		}
	}
}

// responseBytes takes a chunk of a JSON answer body.
func (m *modelExchange) responseBytes(b []byte) {
	if !m.resJSON || m.resLarge {
		return
	}
	if len(m.resBody)+len(b) > maxModelBody {
		m.resLarge, m.resBody = true, nil
		return
	}
	m.resBody = append(m.resBody, b...)
}

// end emits the call's answer at the end of the exchange: a Response, or
// an End when no response came.
func (d *modelCalls) end(m *modelExchange, ev *bundle.Event, answered bool, emit Emit) {
	m.requestDone(ev, emit)
	f := &m.facts
	f.Cut = ev.Truncated || m.resLarge
	f.ClientGone = strings.HasPrefix(ev.Err, ClientGonePrefix)
	out := &Event{Seq: ev.Seq, T: ev.T, Conn: m.call.Conn, Dir: bundle.DirServerToClient, Protocol: m.call.Protocol, Kind: KindResponse,
		ID: m.call.ID, Method: m.call.Method, Call: m.call, Status: f.Status, Err: errOrNil(ev.Err)}
	m.call.EndSeq = ev.Seq
	if !answered {
		m.call.Outcome = OutcomeUnknown
		out.Kind, out.Why = KindEnd, "no HTTP response"
		if ev.Err != "" {
			out.Why += ": " + ev.Err
		}
		facts := *f
		out.Model = &facts
		emit(out)
		return
	}
	if m.call.Method == MethodResponses {
		d.responsesEnd(m, ev, out)
		emit(out)
		return
	}
	switch {
	case m.sse:
		f.Message, f.Complete = m.asm.Message(), m.asm.Complete()
		f.APIError = m.asm.APIError()
	case len(m.resBody) > 0:
		if f.Status >= 300 {
			var e anthropic.ErrorResponse
			if json.Unmarshal(m.resBody, &e) == nil && e.Type == "error" {
				f.APIError = &e.Error
			} else {
				f.APIError = &anthropic.ErrorBody{Type: http.StatusText(f.Status), Message: clipString(string(m.resBody), 200)}
			}
			break
		}
		if m.call.Method == MethodMessages {
			var r anthropic.Response
			if json.Unmarshal(m.resBody, &r) == nil && r.Type == "message" {
				f.Message, f.Complete = &r, true
			} else {
				f.Problems = append(f.Problems, &anthropic.StreamError{Kind: anthropic.ProblemMalformed, Event: "body", Msg: "the JSON answer is not a message: " + clipString(string(m.resBody), 120)})
			}
		}
	case f.Status >= 300:
		f.APIError = &anthropic.ErrorBody{Type: http.StatusText(f.Status), Message: "no body"}
	}
	if f.Message != nil && !f.Cut {
		f.Unoffered = unoffered(m.req, f.Message)
		if f.Complete && len(f.Problems) == 0 {
			f.Reused = d.remember(f.Message, m.call.Conn, ev.Seq)
		}
	}
	switch {
	case f.APIError != nil || (ev.Err != "" && !f.Complete) || len(f.Problems) > 0 || (m.sse && !f.Complete && !f.Cut):
		m.call.Outcome = OutcomeFailure
	default:
		m.call.Outcome = OutcomeSuccess
	}
	if f.Message != nil {
		out.Body, _ = json.Marshal(f.Message)
	} else if f.APIError != nil {
		out.Body, _ = json.Marshal(anthropic.ErrorResponse{Type: "error", Error: *f.APIError})
	} else {
		out.Body = m.resBody
	}
	facts := *f
	out.Model = &facts
	emit(out)
}

// unoffered lists the answer's tool_use blocks whose tool the request does
// not offer (none when the request could not be read).
func unoffered(req *anthropic.Request, msg *anthropic.Response) []string {
	if req == nil {
		return nil
	}
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
	}
	var out []string
	for _, b := range msg.ToolUses() {
		if !offered[b.Name] {
			out = append(out, fmt.Sprintf("tool_use %s calls %q", b.ID, b.Name))
		}
	}
	return out
}

// remember notes a whole answer's ids, and its tool_use blocks as pending,
// and returns the ids an earlier answer had.
func (d *modelCalls) remember(msg *anthropic.Response, conn string, seq uint64) []string {
	var reused []string
	note := d.noter(seq, &reused)
	note("message", msg.ID)
	for _, b := range msg.ToolUses() {
		note("tool_use", b.ID)
		if b.ID != "" {
			d.pending[b.ID] = ToolAnswer{ToolUseID: b.ID, Name: b.Name, Protocol: Anthropic, UseConn: conn, UseSeq: seq}
		}
	}
	return reused
}

// noter returns a function that notes an id of kind answered at seq,
// adding to reused when an earlier answer had it.
func (d *modelCalls) noter(seq uint64, reused *[]string) func(kind, id string) {
	if d.ids == nil {
		d.ids, d.pending = map[string]uint64{}, map[string]ToolAnswer{}
	}
	return func(kind, id string) {
		if id == "" {
			return
		}
		if at, ok := d.ids[kind+id]; ok && at != seq {
			*reused = append(*reused, fmt.Sprintf("%s id %s (first answered at seq %d)", kind, id, at))
			return
		}
		d.ids[kind+id] = seq
	}
}

// stop ends an open model call (the server stopped, the bundle ended).
func (m *modelExchange) stop(at *bundle.Event, emit Emit) {
	m.call.Outcome, m.call.EndSeq = OutcomeUnknown, at.Seq
	facts := m.facts
	emit(&Event{Seq: at.Seq, T: at.T, Conn: m.call.Conn, Protocol: m.call.Protocol, Kind: KindEnd, ID: m.call.ID, Method: m.call.Method, Call: m.call, Model: &facts})
}

func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
