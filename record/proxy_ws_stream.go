package record

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/wsframe"
)

// wsStream follows the frames one side sends as its bytes are relayed: it
// parses their headers across reads, copies (and unmasks) the payloads of
// data messages and control frames, and hands each complete one to the
// relay's recording. It never changes or holds back the bytes relayed.
type wsStream struct {
	rl   *wsRelay
	side *wsPeer

	hdr [wsframe.MaxHeader]byte // a header split across reads
	hn  int

	inFrame bool
	h       wsframe.Header // the current frame
	remain  int64          // its payload bytes still to come
	pos     int64          // its payload bytes seen, for unmasking

	msgOpen  bool // a data message is being assembled
	msgType  wsframe.Opcode
	msgDefl  bool   // its first frame had RSV1: permessage-deflate compressed
	msg      []byte // its payload, up to the proxy's MaxMessageSize
	msgBig   bool   // it holds one of the connection's big slots (wsBig)
	msgSize  int64  // its payload bytes in all
	ctl      []byte // the current control frame's payload
	broken   bool   // a frame could not be parsed: the rest is relayed unrecorded
	maxBytes int64
	arena    []byte        // small messages are cut from it: one allocation for many
	msgFrom  int           // where the message's piece of the arena begins, -1 if it has none
	spare    *bundle.Event // an event the recording is done with, for the next message
}

// arenaSize is the size of the blocks small messages are cut from, and
// arenaMax the largest message cut from one.
const (
	arenaSize = 64 << 10
	arenaMax  = 4 << 10
)

func newWSStream(rl *wsRelay, side *wsPeer) *wsStream {
	return &wsStream{rl: rl, side: side, maxBytes: rl.p.maxMsg, ctl: make([]byte, 0, wsframe.MaxControlPayload), msgFrom: -1}
}

// atBoundary reports whether the bytes seen so far end at a frame boundary,
// where the proxy may write a frame of its own into the stream.
func (s *wsStream) atBoundary() bool { return !s.broken && !s.inFrame && s.hn == 0 }

// directMax bounds a read straight into a big message's buffer.
const directMax = 1 << 20

// directRoom returns how many bytes the relay may read straight into the
// message's buffer (and pass on from there), 0 for none: inside an
// unmasked frame of a big message (a server's: nothing to unmask, so the
// buffer holds the bytes as relayed), up to the recording limit and short
// of the frame's last byte, which comes through feed, so that the
// message's place is still taken before its end is passed on. Saves a copy
// of every byte of a big message from the server.
func (s *wsStream) directRoom() int {
	if s.broken || !s.inFrame || s.h.Masked || s.h.Op.IsControl() || !s.msgBig || s.remain < 2 {
		return 0
	}
	room := min(s.remain-1, s.maxBytes-int64(len(s.msg)), int64(cap(s.msg)-len(s.msg)), directMax)
	return int(max(room, 0))
}

// readInto follows n payload bytes the relay read into the message's
// buffer (see directRoom).
func (s *wsStream) readInto(n int) {
	s.msg = s.msg[:len(s.msg)+n]
	s.msgSize += int64(n)
	s.pos += int64(n)
	s.remain -= int64(n)
}

// feed follows b, the next bytes the side sent.
func (s *wsStream) feed(b []byte) {
	for len(b) > 0 && !s.broken {
		if !s.inFrame {
			n, ok := s.header(b)
			b = b[n:]
			if ok && s.remain == 0 {
				s.endFrame()
			}
			continue
		}
		k := int(min(int64(len(b)), s.remain))
		s.payload(b[:k])
		b = b[k:]
		if s.remain -= int64(k); s.remain == 0 {
			s.endFrame()
		}
	}
}

// header parses the next frame header from b (after any part of it held from
// earlier reads) and returns the bytes of b it used and whether a frame began.
func (s *wsStream) header(b []byte) (int, bool) {
	if s.hn == 0 {
		h, n, err := wsframe.Parse(b)
		if errors.Is(err, wsframe.ErrShort) {
			s.hn = copy(s.hdr[:], b)
			return len(b), false
		}
		if err != nil {
			s.fail(err)
			return len(b), false
		}
		return n, s.begin(h)
	}
	take := copy(s.hdr[s.hn:], b)
	h, n, err := wsframe.Parse(s.hdr[:s.hn+take])
	if errors.Is(err, wsframe.ErrShort) {
		s.hn += take
		return take, false
	}
	if err != nil {
		s.fail(err)
		return len(b), false
	}
	used := n - s.hn
	s.hn = 0
	return used, s.begin(h)
}

// begin starts following a frame; it reports false if the frame breaks the
// protocol in a way that leaves the stream unparseable or unattributable.
func (s *wsStream) begin(h wsframe.Header) bool {
	switch {
	case h.RSV2 || h.RSV3 || (h.RSV1 && (!s.rl.deflate || h.Op != wsframe.OpText && h.Op != wsframe.OpBinary)):
		s.fail(fmt.Errorf("%v frame with reserved bits set", h.Op))
		return false
	case h.Op == wsframe.OpClose || h.Op == wsframe.OpPing || h.Op == wsframe.OpPong:
		s.ctl = s.ctl[:0]
	case h.Op == wsframe.OpText || h.Op == wsframe.OpBinary:
		if s.msgOpen {
			s.fail(errors.New("a new message began before the previous one ended"))
			return false
		}
		s.msgOpen, s.msgType, s.msgDefl, s.msg, s.msgSize = true, h.Op, h.RSV1, nil, 0
	case h.Op == wsframe.OpContinuation:
		if !s.msgOpen {
			s.fail(errors.New("a continuation frame without a message"))
			return false
		}
	default:
		s.fail(fmt.Errorf("unknown %v", h.Op))
		return false
	}
	if !h.Op.IsControl() {
		if room := s.maxBytes - int64(len(s.msg)); room > 0 && h.Length > 0 {
			// Wait while the recording is far behind, before holding more.
			s.rl.q.waitRoom()
			s.grow(int(min(room, h.Length)))
		}
	}
	s.h, s.inFrame, s.remain, s.pos = h, true, h.Length, 0
	return true
}

// grow makes room for n more bytes of the message. The first frame of a small
// message takes a piece of the arena (capped, so that a longer message moves
// out of it rather than writing over the next piece). A message that reaches
// wsBig takes one of the connection's big slots, and its buffer if one is
// spare.
func (s *wsStream) grow(n int) {
	if s.msg == nil && n <= arenaMax {
		if cap(s.arena)-len(s.arena) < n {
			s.arena = make([]byte, 0, arenaSize)
		}
		l := len(s.arena)
		s.msg = s.arena[l : l : l+n]
		s.arena = s.arena[:l+n]
		s.msgFrom = l
		return
	}
	if !s.msgBig && len(s.msg)+n >= wsBig {
		s.msgBig = true
		if buf := s.rl.q.takeBig(len(s.msg) + n); buf != nil {
			s.msg = append(buf, s.msg...)
		}
	}
	s.msg = slices.Grow(s.msg, n)
}

// abandon gives back the big slot of a message that will not be recorded
// (the stream ended or broke in the middle of it), with its buffer: nothing
// else refers to it.
func (s *wsStream) abandon() {
	if s.msgBig {
		s.msgBig = false
		s.rl.q.giveBig(s.msg)
		s.msg = nil
	}
}

// payload follows payload bytes of the current frame.
func (s *wsStream) payload(p []byte) {
	if s.h.Op.IsControl() {
		s.ctl = s.appendUnmasked(s.ctl, p)
		s.pos += int64(len(p))
		return
	}
	s.msgSize += int64(len(p))
	if room := s.maxBytes - int64(len(s.msg)); room > 0 {
		s.msg = s.appendUnmasked(s.msg, p[:min(int64(len(p)), room)])
	}
	s.pos += int64(len(p))
}

// appendUnmasked appends p, payload bytes of the current frame at s.pos, to
// b, unmasking them as they are copied.
func (s *wsStream) appendUnmasked(b, p []byte) []byte {
	if !s.h.Masked {
		return append(b, p...)
	}
	n := len(b)
	b = slices.Grow(b, len(p))[:n+len(p)]
	wsframe.MaskCopy(b[n:], p, s.h.Mask, s.pos)
	return b
}

// endFrame records what the frame that just ended completed.
func (s *wsStream) endFrame() {
	s.inFrame = false
	rl := s.rl
	switch s.h.Op {
	case wsframe.OpClose:
		code, reason, err := wsframe.ParseClose(s.ctl)
		rl.closeFrame(s.side, code, reason, err)
		return
	case wsframe.OpPing, wsframe.OpPong:
		kind := bundle.KindWSPing
		if s.h.Op == wsframe.OpPong {
			kind = bundle.KindWSPong
		}
		rl.record(&bundle.Event{Kind: kind, Conn: rl.id, Dir: s.side.dir, Body: bundle.Payload{Data: bytes.Clone(s.ctl)}}, 0, false)
		return
	}
	if !s.h.Fin {
		return
	}
	s.recordMessage(s.message())
}

// message returns the ws.message event of the message assembled so far.
func (s *wsStream) message() *bundle.Event {
	ev := s.spare
	if ev == nil {
		ev = new(bundle.Event)
	}
	s.spare = nil
	*ev = bundle.Event{Kind: bundle.KindWSMessage, Conn: s.rl.id, Dir: s.side.dir, Type: bundle.TypeText,
		Body: bundle.Payload{Data: s.msg, Binary: s.msgType == wsframe.OpBinary}}
	if s.msgType == wsframe.OpBinary {
		ev.Type = bundle.TypeBinary
	}
	if ev.Body.Data == nil {
		ev.Body.Data = []byte{}
	}
	if s.msgSize > int64(len(s.msg)) {
		ev.Truncated, ev.Size = true, s.msgSize
	}
	return ev
}

// recordMessage hands the message's event to the recording and ends the
// message.
//
// A message that is neither big nor compressed is recorded here, on the
// relay's goroutine, before its bytes are passed on: redacting and encoding
// a small message costs less than waking the connection's recording
// goroutine to do it (a futex wake-up and a core's worth of scheduling per
// message), and it takes its place in the recording at once without
// waiting for the places taken before it. When it is written there and
// then, and no subscriber may hold it, its event and its piece of the arena
// are reused for the next message: a relayed message then allocates
// nothing. Big messages (their recording waits for the writer) and
// compressed ones (inflated in order, per direction) go to the queue.
func (s *wsStream) recordMessage(ev *bundle.Event) {
	rl := s.rl
	switch {
	case s.msgBig:
		// Bounded by the big slots, not by the queue's bytes.
		it := rl.item(ev, 0, s.msgDefl)
		it.big = s.msg
		rl.q.push(it)
	case s.msgDefl:
		rl.record(ev, int64(len(s.msg)), true)
	default:
		if rec := rl.p.rec; rec.emitNoWait(ev) && !rec.Retains() {
			s.spare = ev
			if f := s.msgFrom; f >= 0 && len(s.msg) > 0 && f < len(s.arena) && &s.msg[0] == &s.arena[f] {
				s.arena = s.arena[:f]
			}
		}
	}
	s.msgOpen, s.msg, s.msgBig, s.msgFrom = false, nil, false, -1
}

// incomplete records the message the side was sending when its stream
// ended (why), with the payload bytes relayed of it, marked incomplete:
// Err says so and attrs are {"incomplete":true}. A compressed one is
// inflated as far as it goes.
func (s *wsStream) incomplete(why string) {
	if !s.msgOpen || s.broken {
		return
	}
	ev := s.message()
	ev.Attrs = []byte(`{"incomplete":true}`)
	ev.Err = fmt.Sprintf("incomplete: the %s's stream ended inside this message (%s), after %d of its payload bytes", s.side.name, why, s.msgSize)
	s.recordMessage(ev)
}

// fail stops following the stream after a frame that breaks the protocol:
// the bytes are still relayed (the peer answers them as it would without the
// proxy), and the break is recorded as ws.error.
func (s *wsStream) fail(err error) {
	s.broken = true
	s.abandon()
	rl := s.rl
	rl.record(&bundle.Event{Kind: bundle.KindWSError, Conn: rl.id, Dir: s.side.dir,
		Err: "the " + s.side.name + " sent bytes that are not a WebSocket frame (" + err.Error() + "); what follows is relayed but not recorded"}, 0, false)
}
