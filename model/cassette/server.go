package cassette

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/anthropic"
	"github.com/wireproof/wireproof/model/openai"
	"github.com/wireproof/wireproof/protocol"
)

// HeaderCassette is the response header a cassette sets: "played" on a
// recorded answer, "miss" on the error that answers a request matching
// nothing. The recording proxy keeps it, so a bundle shows which model
// answers were a cassette's misses (check model-cassette-miss).
const HeaderCassette = protocol.CassetteHeader

// Options configure a Handler. Nil means defaults.
type Options struct {
	// Fast plays answers as fast as possible; by default a streamed answer
	// keeps its recorded pacing (the latency to its head, the gaps between
	// its chunks).
	Fast bool
	// OnMiss, when set, is called with each miss as it happens.
	OnMiss func(Miss)
	// Logf, when set, gets one line per request: what was played or missed.
	Logf func(format string, args ...any)
	// HangUpHold is how long a stream whose recorded client left it
	// mid-answer is held open, past the time the client left, before it
	// is cut; 0 means DefaultHangUpHold.
	HangUpHold time.Duration
}

// DefaultHangUpHold is Options.HangUpHold's default.
const DefaultHangUpHold = 10 * time.Second

// Miss is a live request the cassette has no recorded answer for.
type Miss struct {
	// Request is the live request in one line: its path and how many
	// messages and tools it has.
	Request string `json:"request"`
	// Closest names the nearest recorded request ("" when the cassette has
	// none of the path), ClosestSeq its seq in its bundle.
	Closest    string `json:"closest,omitempty"`
	ClosestSeq uint64 `json:"closestSeq,omitempty"`
	// Path is the first field where the live request differs from the
	// closest ("messages[3].content[0].text"); Diff says it in words.
	Path string `json:"path,omitempty"`
	Diff string `json:"diff,omitempty"`
	// Reason says why when there is no diff (the body is not a Messages
	// request).
	Reason string `json:"reason,omitempty"`
}

// String is the miss as the API error's message.
func (m Miss) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "wireproof cassette: no recorded model call matches %s", m.Request)
	if m.Reason != "" {
		fmt.Fprintf(&b, "; %s", m.Reason)
	}
	if m.Closest != "" {
		fmt.Fprintf(&b, "; closest recorded: %s; first difference: %s", m.Closest, m.Diff)
	}
	return b.String()
}

// Report is what a Handler played and missed.
type Report struct {
	Played   int      `json:"played"`
	Repeated int      `json:"repeated"` // answered again after every match had been played
	Missed   int      `json:"missed"`
	Misses   []Miss   `json:"misses"`
	Unplayed []string `json:"unplayed"` // recorded calls never played
	// Held are the calls played whose recorded client had left them
	// mid-answer: each stream was held open where that client left. Cut
	// are those of them whose client stayed past the hold, so the cassette
	// cut the stream (a check that the stream ended may fail on it: the
	// re-run's client did not leave where the recorded one did).
	Held []string `json:"held,omitempty"`
	Cut  []string `json:"cut,omitempty"`
}

// Summary is the report in a few lines for a person.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cassette: played %d, repeated %d, missed %d, never played %d\n", r.Played, r.Repeated, r.Missed, len(r.Unplayed))
	for _, m := range r.Misses {
		fmt.Fprintf(&b, "miss: %s\n", m.String())
	}
	for _, u := range r.Unplayed {
		fmt.Fprintf(&b, "never played: %s\n", u)
	}
	for _, c := range r.Held {
		fmt.Fprintf(&b, "held: %s (its recorded client left it mid-answer; played up to there and held open)\n", c)
	}
	for _, c := range r.Cut {
		fmt.Fprintf(&b, "cut: %s (held, and this client stayed past the hold: the recorded one had left)\n", c)
	}
	return b.String()
}

// maxListedMisses caps Report.Misses.
const maxListedMisses = 1000

// Handler answers Messages requests from a cassette.
type Handler struct {
	c  *Cassette
	o  Options
	mu sync.Mutex
	// played counts each call's plays; bind holds the bindings of every
	// request matched so far (a value bound by one request is bound for
	// the later ones too).
	played []int
	bind   Bindings
	report Report
}

// NewHandler returns a handler serving c.
func NewHandler(c *Cassette, opts *Options) *Handler {
	h := &Handler{c: c, played: make([]int, len(c.Calls)), bind: Bindings{}}
	if opts != nil {
		h.o = *opts
	}
	return h
}

// Report returns what was played and missed so far.
func (h *Handler) Report() Report {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.report
	r.Misses = append([]Miss(nil), r.Misses...)
	r.Held = append([]string(nil), r.Held...)
	r.Cut = append([]string(nil), r.Cut...)
	r.Unplayed = nil
	for i, n := range h.played {
		if n == 0 {
			r.Unplayed = append(r.Unplayed, h.c.Calls[i].Name())
		}
	}
	return r
}

// note adds name to the report's list l, once, up to maxListedMisses names.
func (h *Handler) note(l *[]string, name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(*l) < maxListedMisses && !slices.Contains(*l, name) {
		*l = append(*l, name)
	}
}

func (h *Handler) logf(format string, args ...any) {
	if h.o.Logf != nil {
		h.o.Logf(format, args...)
	}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	if r.URL.Path == ResponsesPath {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			openai.WriteError(w, openai.NewError(http.StatusMethodNotAllowed, openai.ErrInvalidRequest, "Method "+r.Method+" is not allowed on "+r.URL.Path+"; use POST", ""))
			return
		}
	} else if !model.Routed(w, r) {
		return
	}
	body, err := model.ReadBody(r)
	if err != nil {
		reason := "its body could not be read: " + err.Error()
		if errors.As(err, new(*model.BodyTooLargeError)) {
			reason = fmt.Sprintf("its body is over %d bytes", model.MaxBody)
		}
		h.miss(w, Miss{Request: "POST " + r.URL.Path, Reason: reason})
		return
	}
	live, err := ParseShape(r.URL.Path, body)
	if err != nil {
		h.miss(w, Miss{Request: "POST " + r.URL.Path, Reason: err.Error()})
		return
	}
	call, bind, miss := h.pick(live)
	if call == nil {
		h.miss(w, miss)
		return
	}
	h.logf("cassette: %s answered by %s", describe(live), call.Name())
	h.play(w, r.Context(), call, bind, arrived)
}

// describe is a live request in one line.
func describe(s *Shape) string {
	v, _ := s.value.(map[string]any)
	tools, _ := v["tools"].([]any)
	if s.list == "input" {
		items, _ := v["input"].([]any)
		return fmt.Sprintf("POST %s (%d input items, %d tools)", s.Path, len(items), len(tools))
	}
	msgs, _ := v["messages"].([]any)
	return fmt.Sprintf("POST %s (%d messages, %d tools)", s.Path, len(msgs), len(tools))
}

// pick finds the recorded call that answers live: the first matching call
// not played yet, else the last matching one played (a repeat). Without a
// match it explains the miss with the nearest recorded request: the most
// leading messages equal, then the fewest differences, then the first
// recorded.
func (h *Handler) pick(live *Shape) (*Call, Bindings, Miss) {
	h.mu.Lock()
	defer h.mu.Unlock()
	found, repeat := -1, -1
	var foundBind, repeatBind Bindings
	var near *Diff
	nearest := -1
	for i, c := range h.c.Calls {
		b, d := Match(c.Shape, live)
		if d != nil {
			if c.Shape.Path == live.Path && (near == nil || d.Prefix > near.Prefix || d.Prefix == near.Prefix && d.Count < near.Count) {
				near, nearest = d, i
			}
			continue
		}
		if h.played[i] == 0 {
			found, foundBind = i, b
			break
		}
		repeat, repeatBind = i, b
	}
	if found < 0 && repeat >= 0 {
		found, foundBind = repeat, repeatBind
		h.report.Repeated++
		for rec, fresh := range freshIDs(h.c.Calls[found]) {
			foundBind[rec] = fresh
		}
	}
	if found < 0 {
		m := Miss{Request: describe(live)}
		if nearest >= 0 {
			c := h.c.Calls[nearest]
			m.Closest, m.ClosestSeq, m.Path, m.Diff = c.Name(), c.Seq, near.Path, near.String()
		} else {
			m.Reason = "the cassette has no call of this path"
		}
		return nil, nil, m
	}
	h.played[found]++
	h.report.Played++
	for k, v := range foundBind {
		h.bind[k] = v
	}
	all := Bindings{}
	for k, v := range h.bind {
		all[k] = v
	}
	return h.c.Calls[found], all, Miss{}
}

// freshIDs binds each id the recorded answer of call made (an id token of
// the answer that its request does not hold: a response's, an item's, a
// function call's) to a new one of the same form. A call played again
// answers a request made again (a provider resent it after a restart), and
// a live model answers it with new ids: the recorded ones again would be a
// model reusing its ids (model-id-unique). Later requests carry the new ids,
// which bind to the recorded ones as every run-bound id does.
func freshIDs(call *Call) Bindings {
	inRequest := map[string]bool{}
	for _, seg := range tokenize(string(call.Exchange.Body), nil) {
		if seg.class == "id" {
			inRequest[seg.text] = true
		}
	}
	var answer strings.Builder
	for _, c := range call.Exchange.Chunks {
		answer.Write(c.Data)
	}
	out := Bindings{}
	for _, seg := range tokenize(answer.String(), nil) {
		if seg.class == "id" && !inRequest[seg.text] && out[seg.text] == "" {
			out[seg.text] = freshID(seg.text)
		}
	}
	return out
}

// freshID is id with its tail after the prefix ("resp_", "call_") replaced
// by random lowercase hex of the same length, a UUID's dashes kept.
func freshID(id string) string {
	prefix, tail, _ := strings.Cut(id, "_")
	random := []byte(rand.Text() + rand.Text() + rand.Text())
	b := []byte(tail)
	for i := range b {
		if b[i] != '-' {
			b[i] = "0123456789abcdef"[random[i%len(random)]%16]
		}
	}
	return prefix + "_" + string(b)
}

// miss answers an invalid_request_error (which the CLI does not retry)
// saying what missed, and reports it.
func (h *Handler) miss(w http.ResponseWriter, m Miss) {
	h.mu.Lock()
	h.report.Missed++
	if len(h.report.Misses) < maxListedMisses {
		h.report.Misses = append(h.report.Misses, m)
	}
	h.mu.Unlock()
	h.logf("%s", m.String())
	if h.o.OnMiss != nil {
		h.o.OnMiss(m)
	}
	w.Header().Set(HeaderCassette, "miss")
	if strings.HasPrefix(m.Request, "POST "+ResponsesPath) {
		openai.WriteError(w, openai.NewError(http.StatusBadRequest, openai.ErrInvalidRequest, m.String(), ""))
		return
	}
	anthropic.WriteError(w, anthropic.NewError(anthropic.ErrInvalidRequest, m.String()))
}

// play answers with call's recorded answer, bind applied: the recorded
// chunks as they were when no bound value occurs in them, else a streamed
// answer assembled, bound and streamed again (a JSON answer bound in
// place). A stream that did not assemble whole (a fault recorded on
// purpose, a cut) is played as recorded.
func (h *Handler) play(w http.ResponseWriter, ctx context.Context, call *Call, bind Bindings, arrived time.Time) {
	x := call.Exchange
	responses := call.Shape.Path == ResponsesPath
	if x.Status == 0 {
		msg := "wireproof cassette: the recorded call " + call.Name() + " was never answered"
		if responses {
			openai.WriteError(w, openai.NewError(http.StatusInternalServerError, openai.ErrServer, msg, ""))
		} else {
			anthropic.WriteError(w, anthropic.NewError(anthropic.ErrAPI, msg))
		}
		return
	}
	var raw []byte
	for _, c := range x.Chunks {
		raw = append(raw, c.Data...)
	}
	mt, _, _ := mime.ParseMediaType(x.RespHeader.Get("Content-Type"))
	sse := mt == "text/event-stream"
	var events []anthropic.Event
	var oevents []openai.Event
	bound := raw
	switch {
	case sse && responses:
		oevents = rebindResponses(raw, bind) // nil: nothing bound, or not whole (played as recorded)
	case sse:
		events = rebind(raw, bind) // nil: nothing bound, or not whole (played as recorded)
	default:
		bound = []byte(bind.Apply(string(raw)))
	}
	hdr := w.Header()
	for k, vs := range x.RespHeader {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding", "Connection", "Date", "Keep-Alive":
			continue
		case "Content-Encoding":
			if x.Decoded {
				continue
			}
		}
		hdr[k] = append([]string(nil), vs...)
	}
	hdr.Set(HeaderCassette, "played")
	if !sse {
		hdr.Set("Content-Length", fmt.Sprint(len(bound)))
	}
	base := time.Duration(x.ReqT)
	wait := func(t int64) bool {
		if h.o.Fast {
			return ctx.Err() == nil
		}
		d := time.Until(arrived.Add(time.Duration(t) - base))
		if d <= 0 {
			return ctx.Err() == nil
		}
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-tm.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if !wait(x.RespT) {
		return
	}
	w.WriteHeader(x.Status)
	f, _ := w.(http.Flusher)
	first, last := x.RespT, x.RespT
	if len(x.Chunks) > 0 {
		first, last = x.Chunks[0].T, x.Chunks[len(x.Chunks)-1].T
	}
	// at is the time of event i of n, spread over the recorded chunks'.
	at := func(i, n int) int64 {
		if n > 1 {
			return first + (last-first)*int64(i)/int64(n-1)
		}
		return first
	}
	switch {
	case oevents != nil:
		sw := openai.NewStreamWriter(w)
		for i, ev := range oevents {
			if !wait(at(i, len(oevents))) || sw.Write(ev) != nil {
				return
			}
		}
	case events != nil:
		sw := anthropic.NewStreamWriter(w)
		for i, ev := range events {
			if !wait(at(i, len(events))) || sw.Write(ev) != nil {
				return
			}
		}
	case !sse:
		_, _ = w.Write(bound)
	default:
		for _, c := range x.Chunks {
			if !wait(c.T) {
				return
			}
			if _, err := w.Write(c.Data); err != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
	}
	if x.Err != "" && sse && !streamEnded(raw, responses) {
		if strings.HasPrefix(x.Err, protocol.ClientGonePrefix) {
			// The recorded client left here, the model still answering
			// (an interrupted turn, a killed CLI): what it sent after was
			// never recorded, and the break is the client's, not the
			// model's. The stream is held open, as the model held it, so
			// a client that leaves again leaves as recorded, and the run
			// is judged as the recorded one was. A client that stays past
			// the time the recorded one left, by the hold, is cut.
			h.logf("cassette: %s: the recorded client left mid-answer; holding the stream until this one leaves", call.Name())
			h.note(&h.report.Held, call.Name())
			hold := h.o.HangUpHold
			if hold <= 0 {
				hold = DefaultHangUpHold
			}
			if f != nil {
				f.Flush() // the head, when nothing of the body was recorded
			}
			if x.EndT > last && !h.o.Fast && !wait(x.EndT) {
				return
			}
			tm := time.NewTimer(hold)
			defer tm.Stop()
			select {
			case <-ctx.Done():
				return
			case <-tm.C:
			}
			h.logf("cassette: %s: the client stayed %v past where the recorded one left; cut", call.Name(), hold)
			h.note(&h.report.Cut, call.Name())
		}
		// The recorded stream ended early (a cut): end this one the same way.
		panic(http.ErrAbortHandler)
	}
}

// streamEnded reports whether a recorded stream reached its terminal event
// (message_stop or an error event; response.completed, failed, incomplete
// or error). An error recorded after that is the client hanging up once it
// had the whole answer (Codex closes its connection on response.completed,
// so the recorder's read of the rest is cancelled), not a cut: played
// again it would break a stream the model had finished, and a client that
// saw the break first retries the call (a call played twice).
func streamEnded(raw []byte, responses bool) bool {
	if responses {
		asm, _, _ := openai.Assemble(bytes.NewReader(raw))
		return asm.Ended() != ""
	}
	asm := anthropic.NewAssembler()
	_ = anthropic.ReadEvents(bytes.NewReader(raw), func(name string, data []byte) error {
		_ = asm.Feed(name, data)
		return nil
	})
	return asm.Complete() || asm.APIError() != nil
}

// rebind assembles a recorded stream, applies bind to its texts and tool
// inputs, and returns the events that stream the bound message; nil when
// no bound value occurs in it (a value may be cut across deltas, so the
// message is looked at whole) or the stream did not assemble whole.
func rebind(raw []byte, bind Bindings) []anthropic.Event {
	if !bind.changes() {
		return nil
	}
	asm := anthropic.NewAssembler()
	bad := false
	err := anthropic.ReadEvents(strings.NewReader(string(raw)), func(name string, data []byte) error {
		if asm.Feed(name, data) != nil {
			bad = true
		}
		return nil
	})
	msg := asm.Message()
	if err != nil || bad || msg == nil || !asm.Complete() || asm.APIError() != nil {
		return nil
	}
	changed := false
	for i := range msg.Content {
		b := &msg.Content[i]
		if t := bind.Apply(b.Text); t != b.Text {
			b.Text, changed = t, true
		}
		if len(b.Input) > 0 {
			in := bind.Apply(string(b.Input))
			if in != string(b.Input) && json.Valid([]byte(in)) {
				b.Input, changed = json.RawMessage(in), true
			}
		}
	}
	if !changed {
		return nil
	}
	return anthropic.Events(msg, nil)
}

// rebindResponses is rebind for a Responses stream: it assembles the
// recorded response, applies bind to its output items (ids, call ids,
// message texts, function call arguments, an exec session's number in a
// session_id argument) and returns the events that stream the bound
// response; nil when nothing changed or the stream did not assemble whole.
func rebindResponses(raw []byte, bind Bindings) []openai.Event {
	if !bind.changes() {
		return nil
	}
	asm, problems, err := openai.Assemble(strings.NewReader(string(raw)))
	resp := asm.Response()
	if err != nil || len(problems) > 0 || resp == nil || !asm.Complete() || asm.APIError() != nil {
		return nil
	}
	changed := false
	set := func(p *string, v string) {
		if v != *p {
			*p, changed = v, true
		}
	}
	set(&resp.ID, bind.Apply(resp.ID))
	for i := range resp.Output {
		it := &resp.Output[i]
		set(&it.ID, bind.Apply(it.ID))
		set(&it.CallID, bind.Apply(it.CallID))
		for k := range it.Content {
			set(&it.Content[k].Text, bind.Apply(it.Content[k].Text))
		}
		if it.Arguments != "" {
			if args := bindArguments(bind.Apply(it.Arguments), bind); json.Valid([]byte(args)) {
				set(&it.Arguments, args)
			}
		}
	}
	if !changed {
		return nil
	}
	return openai.Events(resp, nil)
}

// bindArguments binds a function call's session_id argument (write_stdin's
// exec session) to this run's session.
func bindArguments(args string, bind Bindings) string {
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return args
	}
	n, ok := m["session_id"].(json.Number)
	if !ok {
		return args
	}
	live := bind.SessionID(n.String())
	if live == n.String() {
		return args
	}
	m["session_id"] = json.Number(live)
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return string(b)
}
