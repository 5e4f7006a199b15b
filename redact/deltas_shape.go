package redact

import (
	"bytes"
	"strings"

	"github.com/wireproof/wireproof/internal/jsonscan"
	"github.com/wireproof/wireproof/internal/rare"
)

// deltaShape is what a message is to Deltas: a piece of a keyed text (key
// set: the string token tok of the message, whose value is val), the end of
// one text (end), of an item's texts (endGroup) or of a stream's (endFamily),
// or nothing (all empty).
type deltaShape struct {
	key, group, family       string
	tok                      span
	val                      []byte
	end, endGroup, endFamily string
}

// ends reports whether the shape ends the text keyed name (of group and
// family).
func (sh *deltaShape) ends(name, group, family string) bool {
	return name == sh.end || sh.endGroup != "" && group == sh.endGroup || sh.endFamily != "" && family == sh.endFamily
}

// isEnd reports whether the shape ends some text.
func (sh *deltaShape) isEnd() bool { return sh.end != "" || sh.endGroup != "" || sh.endFamily != "" }

// deltaFields are the value spans of the fields a delta shape reads in one
// JSON object (a zero span: absent).
type deltaFields struct {
	typ, index, delta, itemID, outputIndex, contentIndex, summaryIndex   span
	method, params, event, parent, text, partialJSON, thinking, id, item span
	block, tag, values, kind, payload, messageID, streaming              span
}

// mayBeDelta reports whether msg may be a piece of a streamed text of a
// shape Deltas knows: a cheap test, true of every such message and of a few
// others.
func mayBeDelta(msg []byte) bool {
	return rare.Any(msg, deltaWords)
}

// deltaWords are the words of mayBeDelta: "elta" of every delta's type
// ("content_block_delta", "response.output_text.delta", ...), the start of
// an Anthropic content block, and T3's thread.message-sent.
var deltaWords = []rare.Word{rare.New("elta"), rare.New("content_block_start"), rare.New(t3MessageSent)}

// parseDelta appends to dst the shapes of msg, in the order they come in
// it: none, or one (a delta, an end) for every shape but T3's, whose Chunk
// may carry several. ends says whether an end matters (some text is open);
// without it only a delta is looked for. The caller reuses dst from message
// to message (a shape's val is its own, never dst's).
func parseDelta(dst []deltaShape, msg []byte, ends bool) []deltaShape {
	if !mayBeDelta(msg) && (!ends || !mayEnd(msg)) {
		return dst
	}
	start, end, ok := jsonOf(msg)
	if !ok {
		return dst
	}
	f, fend, ok := readFields(msg[:end], start)
	if !ok || jsonscan.SkipSpace(msg[:end], fend) != end {
		return dst
	}
	if tag, _ := strValue(msg, f.tag); tag == "Chunk" && f.method.end == 0 {
		return t3Shapes(dst, msg, f)
	}
	if sh := parseOne(msg, f); sh.key != "" || sh.isEnd() {
		return append(dst, sh)
	}
	return dst
}

// parseOne returns the shape of the one JSON object of msg whose fields are
// f (all empty: none).
func parseOne(msg []byte, f deltaFields) deltaShape {
	if f.method.end > 0 {
		return codexShape(msg, f)
	}
	typ, _ := strValue(msg, f.typ)
	if typ == "stream_event" && f.event.end > 0 {
		ev, _, ok := readFields(msg, f.event.start)
		if !ok {
			return deltaShape{}
		}
		return anthropicShape(msg, ev, "claude|"+raw(msg, f.parent))
	}
	if strings.HasPrefix(typ, "response.") {
		return openaiShape(msg, f, typ)
	}
	return anthropicShape(msg, f, "anthropic")
}

// mayEnd reports whether msg may end a text.
func mayEnd(msg []byte) bool {
	return rare.Any(msg, endWords)
}

// endWords are the words of mayEnd: "complete" is in "completed" and in
// "incomplete".
var endWords = []rare.Word{rare.New("_stop"), rare.New(".done"), rare.New("complete"), rare.New("failed")}

// jsonOf returns where the JSON object of msg is: msg itself (an NDJSON
// line, a WebSocket message), or the one data line of a server-sent event.
func jsonOf(msg []byte) (start, end int, ok bool) {
	i := jsonscan.SkipSpace(msg, 0)
	if i < len(msg) && msg[i] == '{' {
		return i, len(msg), true
	}
	found := false
	for ls := 0; ls < len(msg); {
		le := ls
		for le < len(msg) && msg[le] != '\n' && msg[le] != '\r' {
			le++
		}
		if line := msg[ls:le]; bytes.HasPrefix(line, []byte("data:")) {
			if found {
				return 0, 0, false // an event of several data lines: no delta shape
			}
			found = true
			start, end = ls+len("data:"), le
			if start < le && msg[start] == ' ' {
				start++
			}
		}
		ls = le + 1
	}
	return start, end, found && start < end && msg[start] == '{'
}

// readFields reads the fields of the object at b[start] and returns where it
// ends.
func readFields(b []byte, start int) (deltaFields, int, bool) {
	var f deltaFields
	s := jsonscan.NewScanner(b)
	s.Seek(start)
	ok := s.Object(1, func(key []byte, plain bool) bool {
		s.Space()
		st := s.Pos()
		if !s.Skip(2) {
			return false
		}
		sp := span{st, s.Pos()}
		if !plain {
			return true
		}
		switch string(key) {
		case "type":
			f.typ = sp
		case "index":
			f.index = sp
		case "delta":
			f.delta = sp
		case "item_id":
			f.itemID = sp
		case "itemId":
			f.itemID = sp
		case "output_index":
			f.outputIndex = sp
		case "content_index", "contentIndex":
			f.contentIndex = sp
		case "summary_index", "summaryIndex":
			f.summaryIndex = sp
		case "method":
			f.method = sp
		case "params":
			f.params = sp
		case "event":
			f.event = sp
		case "parent_tool_use_id":
			f.parent = sp
		case "text":
			f.text = sp
		case "partial_json":
			f.partialJSON = sp
		case "thinking":
			f.thinking = sp
		case "id":
			f.id = sp
		case "item":
			f.item = sp
		case "content_block":
			f.block = sp
		case "_tag":
			f.tag = sp
		case "values":
			f.values = sp
		case "kind":
			f.kind = sp
		case "payload":
			f.payload = sp
		case "messageId":
			f.messageID = sp
		case "streaming":
			f.streaming = sp
		}
		return true
	})
	return f, s.Pos(), ok
}

// anthropicShape is the shape of a Messages API stream event (family names
// the stream: a plain one, or the stream_events of one parent tool use).
func anthropicShape(msg []byte, f deltaFields, family string) deltaShape {
	typ, _ := strValue(msg, f.typ)
	switch typ {
	case "content_block_delta":
		return anthropicPiece(msg, f, f.delta, family, func(d deltaFields) []span { return []span{d.text, d.partialJSON, d.thinking} })
	case "content_block_start":
		// A block may begin with text of its own (the API sends it empty):
		// the first piece.
		return anthropicPiece(msg, f, f.block, family, func(b deltaFields) []span { return []span{b.text, b.thinking} })
	case "content_block_stop":
		return deltaShape{end: family + "|" + raw(msg, f.index)}
	case "message_stop":
		return deltaShape{endFamily: family}
	}
	return deltaShape{}
}

// anthropicPiece is the piece of the object obj of event f holds: the first
// string of the fields pick names, keyed by the event's index.
func anthropicPiece(msg []byte, f deltaFields, obj span, family string, pick func(deltaFields) []span) deltaShape {
	if obj.end == 0 || msg[obj.start] != '{' {
		return deltaShape{}
	}
	o, _, ok := readFields(msg, obj.start)
	if !ok {
		return deltaShape{}
	}
	for _, sp := range pick(o) {
		if val, ok := strBytes(msg, sp); ok {
			k := family + "|" + raw(msg, f.index)
			return deltaShape{key: k, group: k, family: family, tok: sp, val: val}
		}
	}
	return deltaShape{}
}

// openaiShape is the shape of a Responses API stream event.
func openaiShape(msg []byte, f deltaFields, typ string) deltaShape {
	item, _ := strValue(msg, f.itemID)
	ids := item + "|" + raw(msg, f.outputIndex) + "|" + raw(msg, f.contentIndex) + "|" + raw(msg, f.summaryIndex)
	switch {
	case strings.HasSuffix(typ, ".delta"):
		if val, ok := strBytes(msg, f.delta); ok {
			return deltaShape{key: "openai|" + typ + "|" + ids, group: "openai|" + item, family: "openai", tok: f.delta, val: val}
		}
	case typ == "response.output_item.done":
		if f.item.end > 0 && msg[f.item.start] == '{' {
			if it, _, ok := readFields(msg, f.item.start); ok {
				id, _ := strValue(msg, it.id)
				return deltaShape{endGroup: "openai|" + id}
			}
		}
	case strings.HasSuffix(typ, ".done"):
		return deltaShape{end: "openai|" + strings.TrimSuffix(typ, ".done") + ".delta|" + ids}
	case typ == "response.completed" || typ == "response.failed" || typ == "response.incomplete":
		return deltaShape{endFamily: "openai"}
	}
	return deltaShape{}
}

// codexShape is the shape of a Codex app-server notification.
func codexShape(msg []byte, f deltaFields) deltaShape {
	method, _ := strValue(msg, f.method)
	if f.params.end == 0 || msg[f.params.start] != '{' {
		return deltaShape{}
	}
	p, _, ok := readFields(msg, f.params.start)
	if !ok {
		return deltaShape{}
	}
	switch {
	case strings.HasPrefix(method, "item/") && (strings.HasSuffix(method, "/delta") || strings.HasSuffix(method, "Delta")):
		item, _ := strValue(msg, p.itemID)
		if val, ok := strBytes(msg, p.delta); ok {
			k := "codex|" + method + "|" + item + "|" + raw(msg, p.contentIndex) + "|" + raw(msg, p.summaryIndex)
			return deltaShape{key: k, group: "codex|" + item, family: "codex", tok: p.delta, val: val}
		}
	case method == "item/completed":
		if p.item.end > 0 && msg[p.item.start] == '{' {
			if it, _, ok := readFields(msg, p.item.start); ok {
				id, _ := strValue(msg, it.id)
				return deltaShape{endGroup: "codex|" + id}
			}
		}
	case method == "turn/completed":
		return deltaShape{endFamily: "codex"}
	}
	return deltaShape{}
}

// t3MessageSent is the type of the T3 orchestration event that streams an
// assistant message's text.
const t3MessageSent = "thread.message-sent"

// t3Shapes are the shapes of an Effect RPC Chunk of T3's thread stream (its
// WebSocket protocol): an assistant message streamed as thread.message-sent
// events, each with a piece of the message's text and streaming true, ended
// by one with streaming false (and an empty text). A Chunk carries what the
// server's stream had ready when the client's Ack let it send (Effect's
// Stream.fromQueue takes all that is queued), so a fast stream's Chunk holds
// several values: the pieces (and ends) of one message or of several, and
// other events between them. Each is a shape of its own, in order.
func t3Shapes(dst []deltaShape, msg []byte, f deltaFields) []deltaShape {
	if f.values.end == 0 || msg[f.values.start] != '[' {
		return dst
	}
	s := jsonscan.NewScanner(msg[:f.values.end])
	s.Seek(f.values.start)
	out := dst
	if !s.Array(1, func() bool {
		s.Space()
		st := s.Pos()
		if !s.Skip(2) {
			return false
		}
		if sh := t3Value(msg, st); sh.key != "" || sh.isEnd() {
			out = append(out, sh)
		}
		return true
	}) {
		return dst
	}
	return out
}

// t3Value is the shape of the value of a T3 Chunk at msg[at].
func t3Value(msg []byte, at int) deltaShape {
	if msg[at] != '{' {
		return deltaShape{}
	}
	v, _, ok := readFields(msg, at)
	if kind, _ := strValue(msg, v.kind); !ok || kind != "event" || v.event.end == 0 || msg[v.event.start] != '{' {
		return deltaShape{}
	}
	ev, _, ok := readFields(msg, v.event.start)
	if typ, _ := strValue(msg, ev.typ); !ok || typ != t3MessageSent || ev.payload.end == 0 || msg[ev.payload.start] != '{' {
		return deltaShape{}
	}
	p, _, ok := readFields(msg, ev.payload.start)
	id, idOK := strValue(msg, p.messageID)
	if !ok || !idOK {
		return deltaShape{}
	}
	key := "t3|" + id
	switch raw(msg, p.streaming) {
	case "true":
		if val, ok := strBytes(msg, p.text); ok {
			return deltaShape{key: key, group: key, family: "t3", tok: p.text, val: val}
		}
	case "false":
		return deltaShape{end: key}
	}
	return deltaShape{}
}

// raw returns the bytes of a value ("" if absent).
func raw(b []byte, sp span) string { return string(b[sp.start:sp.end]) }

// strBytes returns the value of the string token at sp.
func strBytes(b []byte, sp span) ([]byte, bool) {
	if sp.end-sp.start < 2 || b[sp.start] != '"' {
		return nil, false
	}
	v, ok := jsonscan.AppendUnquote(nil, b[sp.start+1:sp.end-1])
	if v == nil {
		v = []byte{}
	}
	return v, ok
}

// strValue is strBytes as a string.
func strValue(b []byte, sp span) (string, bool) {
	v, ok := strBytes(b, sp)
	return string(v), ok
}
