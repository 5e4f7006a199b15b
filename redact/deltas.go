package redact

import (
	"slices"
	"unicode/utf8"
)

// maxDeltaHold bounds what a Deltas holds back: the messages held, counted
// in bytes and in number. A stream that passes either bound while a tail is
// held drops that tail (as a cut stream does) and releases what it held.
const (
	maxDeltaHoldBytes = 8 << 20
	maxDeltaHoldMsgs  = 1 << 16
)

// maxDeltaFieldHold bounds how much of a text an unfinished token field
// holds back (Stream's maxFieldHold for a byte stream): a value longer than
// this is no credential, and the text is released as it stands. Each piece
// scans the text held again, so this also bounds the cost of a piece.
const maxDeltaFieldHold = 4 << 10

// Deltas redacts a stream of messages (the events of a server-sent event
// stream, the lines of an NDJSON stream, the text messages of a WebSocket)
// in which a text is streamed as pieces, one per message (or several, in a
// T3 Chunk), that a reader joins: the deltas of a model's answer. A secret split across two pieces
// is found in no single message, yet anyone folding the deltas reads it
// whole; Deltas joins each text's pieces and redacts the joined text.
//
// It recognises these shapes (each message is JSON, or a server-sent event
// whose one data line is):
//
//	Anthropic Messages   {"type":"content_block_delta","index":N,"delta":{"text"|"partial_json"|"thinking":S}}
//	                     (and a content_block_start's content_block.text or .thinking, its first piece)
//	OpenAI Responses     {"type":"response.<...>.delta","item_id":I,"output_index":N,"content_index":N,"delta":S}
//	Codex app-server     {"method":"item/<...>/delta"|"item/<...>Delta","params":{"itemId":I,"delta":S}}
//	Claude stream-json   {"type":"stream_event","event":<an Anthropic event>,"parent_tool_use_id":P}
//	T3 thread stream     {"_tag":"Chunk","values":[{"kind":"event","event":{"type":"thread.message-sent",
//	                       "payload":{"messageId":M,"text":S,"streaming":true}}},...]} (ended by streaming false;
//	                       each value of the Chunk a piece or an end of its own)
//
// Each text is keyed (by index, by item and indexes and type, by method and
// item, by parent tool use, by message). Next returns at once every message
// that cannot hold the start of a secret; it holds back a message whose
// text's joined tail could begin one (in any spelling: the Redactor's
// matcher runs over the joined text), and every later message of the stream
// with it, so the messages keep their order. The hold is bounded by the
// longest secret's spelling, as Stream's is, and ends when the text ends
// (content_block_stop, message_stop, a response's .done or completed event,
// Codex's item/completed and turn/completed, T3's message-sent with
// streaming false). When a secret completes across pieces, the pieces are
// rewritten so that the joined text reads as the redacted text would: the
// first piece the secret touches carries "[REDACTED]" where it began, the
// others lose what they held of it. Only the string token of each piece is
// rewritten, in place; every other byte of the message stays as it came, so
// each message stays valid JSON (or a valid event).
//
// Every message given to Next is returned exactly once, in the order given,
// by Next or Flush; a caller keeps what it knows of each message (its
// attributes) in a queue beside it.
//
// The messages returned are not redacted on their own yet: the recording
// redacts every event when it records it (Recorder.Emit).
//
// A Deltas is not safe for concurrent use.
type Deltas struct {
	red       *Redactor
	keys      map[string]*deltaKey
	queue     []*deltaMsg // the messages held, oldest first
	heldBytes int
	shapes    []deltaShape // parseDelta's, reused
}

// NewDeltas returns a Deltas redacting with the secrets of red (those it
// learns later included).
func NewDeltas(red *Redactor) *Deltas {
	return &Deltas{red: red, keys: map[string]*deltaKey{}}
}

// deltaMsg is one message held.
type deltaMsg struct {
	data   []byte
	pieces []*deltaPiece // the deltas it carries, in the order of data
}

// holds reports whether a piece of m holds it back.
func (m *deltaMsg) holds() bool {
	for _, p := range m.pieces {
		if p.hold {
			return true
		}
	}
	return false
}

// deltaPiece is one piece of a keyed text: the string token data[tok.start:
// tok.end] of its message, and its value.
type deltaPiece struct {
	msg   *deltaMsg
	key   *deltaKey
	tok   span
	val   []byte // the decoded value, as rewritten
	hold  bool   // the joined tail from here on could begin a secret
	dirty bool   // val was rewritten
}

// deltaKey is one keyed text.
type deltaKey struct {
	name, group, family string
	pieces              []*deltaPiece // the pieces not yet released, in order
}

// Next takes the next complete message and returns the messages that can be
// recorded now, in order. msg is owned by the Deltas from then on; a message
// returned may be msg itself, which the Deltas never writes into: a message
// it rewrote is returned as a new slice.
func (d *Deltas) Next(msg []byte) [][]byte {
	m := &deltaMsg{data: msg}
	d.shapes = parseDelta(d.shapes[:0], msg, len(d.keys) > 0)
	for _, sh := range d.shapes {
		switch {
		case sh.key != "":
			k := d.keys[sh.key]
			if k == nil {
				k = &deltaKey{name: sh.key, group: sh.group, family: sh.family}
				d.keys[sh.key] = k
			}
			p := &deltaPiece{msg: m, key: k, tok: sh.tok, val: sh.val}
			m.pieces = append(m.pieces, p)
			k.pieces = append(k.pieces, p)
			d.scan(k, scanHold)
		case sh.isEnd():
			for name, k := range d.keys {
				if sh.ends(name, k.group, k.family) {
					d.scan(k, scanFinal)
					delete(d.keys, name)
				}
			}
		}
	}
	if len(d.queue) == 0 && !m.holds() {
		d.release(m)
		return [][]byte{m.data}
	}
	d.queue = append(d.queue, m)
	d.heldBytes += len(m.data)
	if d.heldBytes > maxDeltaHoldBytes || len(d.queue) > maxDeltaHoldMsgs {
		// Held too long: the tails held are dropped, as a cut stream's are.
		for _, k := range d.keys {
			d.drop(k)
		}
	}
	return d.releasable()
}

// Passes reports whether Next would return msg alone and as it is, holding
// nothing of it: nothing is held and msg is no piece of a text. A caller
// that must copy a message to hand it to Next (one in a reader's buffer)
// need not, for such a message, nor call Next.
func (d *Deltas) Passes(msg []byte) bool {
	return len(d.queue) == 0 && len(d.keys) == 0 && !mayBeDelta(msg)
}

// Flush returns every message still held, at the end of the stream. If the
// stream was cut short (ended is false), a held tail that could be the start
// of a secret whose end was never seen is dropped from its piece rather than
// recorded; the messages themselves are returned.
func (d *Deltas) Flush(ended bool) [][]byte {
	for name, k := range d.keys {
		if ended {
			d.scan(k, scanFinal)
		} else {
			d.drop(k)
		}
		delete(d.keys, name)
	}
	out := make([][]byte, 0, len(d.queue))
	for _, m := range d.queue {
		d.release(m)
		out = append(out, m.data)
	}
	d.queue, d.heldBytes = nil, 0
	return out
}

// releasable pops the messages at the head of the queue that hold nothing
// back.
func (d *Deltas) releasable() [][]byte {
	var out [][]byte
	for len(d.queue) > 0 {
		m := d.queue[0]
		if m.holds() {
			break
		}
		d.queue[0] = nil
		d.queue = d.queue[1:]
		d.heldBytes -= len(m.data)
		d.release(m)
		out = append(out, m.data)
	}
	if len(d.queue) == 0 {
		d.queue = nil
	}
	return out
}

// release writes a message's rewritten pieces into it (a new slice: the
// message given is never written into) and forgets its pieces.
func (d *Deltas) release(m *deltaMsg) {
	var out []byte
	last := 0 // the offset of m.data copied up to
	for _, p := range m.pieces {
		if p.dirty {
			if out == nil {
				out = make([]byte, 0, len(m.data)+len(Redacted))
			}
			out = append(out, m.data[last:p.tok.start]...)
			out = appendJSONString(out, p.val)
			last = p.tok.end
		}
		k := p.key
		if i := slices.Index(k.pieces, p); i >= 0 {
			k.pieces = slices.Delete(k.pieces, i, i+1)
		}
	}
	if out != nil {
		m.data = append(out, m.data[last:]...)
	}
	m.pieces = nil
}

// window returns the joined text of k's pieces from the first that holds
// (those before it cannot be part of a secret not yet seen) and where each
// of those pieces begins in it.
func (k *deltaKey) window() (text []byte, from int, starts []int) {
	from = len(k.pieces) - 1
	for from > 0 && k.pieces[from-1].hold {
		from--
	}
	for _, p := range k.pieces[from:] {
		starts = append(starts, len(text))
		text = append(text, p.val...)
	}
	return text, from, starts
}

// How scan treats the tail of a text that could begin a secret.
type scanMode int

const (
	scanHold  scanMode = iota // the text goes on: its pieces hold
	scanFinal                 // the text is over: nothing can follow
	scanDrop                  // the stream was cut: the tail is dropped
)

// scan redacts the joined text of k where a secret (or a token field)
// completes in it and decides which of its pieces hold: those the tail that
// could begin a secret or an unfinished token field reaches into.
func (d *Deltas) scan(k *deltaKey, mode scanMode) {
	if len(k.pieces) == 0 {
		return
	}
	w, from, starts := k.window()
	r := d.red
	hold := len(w)
	if mode != scanFinal {
		if hold = r.fields.hold(w, r.fields.holdWord(w)); len(w)-hold > maxDeltaFieldHold {
			hold = len(w)
		}
	}
	r.learn(w[:hold])
	// A text that is over is a whole text: a secret's stub it ends with is
	// redacted, as it would be in the text folded (Set.findText).
	var spans []span
	cut := len(w)
	if mode == scanFinal {
		spans = r.Snapshot().findText(w)
	} else {
		spans, cut = r.Snapshot().find(w)
	}
	cut = min(cut, hold)
	r.fields.scan(w, func(f field) { spans = append(spans, span{f.start, f.end}) })
	// An occurrence or a field straddling the cut waits whole. When the
	// stream was cut, nothing more will come: one found whole where the
	// cut is (the start of what may be a longer occurrence, or inside it)
	// is redacted where it stands, "[REDACTED]" keeping its place, and only
	// what follows it is dropped.
	for moved := true; moved; {
		moved = false
		for _, sp := range spans {
			switch {
			case mode == scanDrop && sp.start <= cut && cut < sp.end:
				cut, moved = sp.end, true
			case mode != scanDrop && sp.start < cut && cut < sp.end:
				cut, moved = sp.start, true
			}
		}
	}
	var done []span
	for _, sp := range mergeSpans(w, spans) {
		if sp.end <= cut {
			done = append(done, sp)
		}
	}
	pieces := k.pieces[from:]
	for i, p := range pieces {
		ps, pe := starts[i], starts[i]+len(p.val)
		p.hold = mode == scanHold && pe > cut
		if mode == scanDrop && pe > cut {
			// The tail from the cut goes (spans in done all end before it).
			p.val, p.dirty = slices.Clone(p.val[:max(cut, ps)-ps]), true
		}
	}
	rewrite(pieces, starts, done)
}

// rewrite replaces spans of the joined text of pieces (piece i begins at
// starts[i]) with Redacted, written into the first piece each span touches;
// the others lose what they held of it.
func rewrite(pieces []*deltaPiece, starts []int, spans []span) {
	if len(spans) == 0 {
		return
	}
	for i, p := range pieces {
		ps, pe := starts[i], starts[i]+len(p.val)
		var out []byte
		last := ps // the joined-text offset copied up to
		touched := false
		for _, sp := range spans {
			if sp.end <= ps || sp.start >= pe {
				continue
			}
			touched = true
			s, e := max(sp.start, ps), min(sp.end, pe)
			out = append(out, p.val[last-ps:s-ps]...)
			if sp.start >= ps {
				out = append(out, Redacted...)
			}
			last = e
		}
		if touched {
			out = append(out, p.val[last-ps:]...)
			p.val, p.dirty = out, true
		}
	}
}

// drop redacts what is complete in k's text and cuts out of its pieces the
// tail that could begin a secret: the stream was cut (or held too long)
// before that was decided.
func (d *Deltas) drop(k *deltaKey) { d.scan(k, scanDrop) }

// appendJSONString appends v as a JSON string token: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(dst, v []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(v[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, v[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
