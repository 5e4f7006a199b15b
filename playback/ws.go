package playback

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/wireproof/wireproof/bundle"
)

// serveWebSocket matches an upgrade to a recorded connection by path (the
// first unplayed one, preferring one whose query matches too) and plays it.
func (p *Player) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if p.isClosed() {
		http.Error(w, "wireproof playback is stopping", http.StatusServiceUnavailable)
		return
	}
	live := newRequest(http.MethodGet, r.URL, nil, "")
	pathOnly := live
	pathOnly.Query = nil
	summary := "GET " + r.URL.Path

	p.ids.mu.Lock()
	i, repeated := p.pick(p.wsReqs, p.wsPlayed, &live, nil)
	if i < 0 {
		// The query differs (a ticket, a version): the path decides.
		recs := make([]request, len(p.wsReqs))
		for k, q := range p.wsReqs {
			q.Query = nil
			recs[k] = q
		}
		i, repeated = p.pick(recs, p.wsPlayed, &pathOnly, nil)
	}
	var miss Miss
	var sc *script
	if i < 0 {
		miss = p.closest("websocket connection", p.wsReqs, p.wsPlayed, func(i int) (uint64, string) {
			c := p.rec.Conns[i]
			return c.Seq, "GET " + c.URL.Path
		}, &live, summary)
	} else {
		if prev := p.scripts[i]; prev == nil {
			p.scripts[i] = newScript(p.rec.Conns[i])
		} else if repeated {
			// A reconnection plays the calls afresh; what the earlier
			// connections played stays played.
			p.scripts[i] = prev.again()
		}
		sc = p.scripts[i]
	}
	p.ids.mu.Unlock()

	if i < 0 {
		miss = p.addMiss(miss)
		w.Header().Set("X-Wireproof-Playback", "miss")
		http.Error(w, miss.String(), http.StatusNotFound)
		return
	}
	opts := &websocket.AcceptOptions{InsecureSkipVerify: true, CompressionMode: websocket.CompressionDisabled}
	if sc.conn.Subprotocol != "" {
		opts.Subprotocols = []string{sc.conn.Subprotocol}
	}
	c, err := websocket.Accept(w, r, opts)
	if err != nil {
		// Accept has answered the malformed upgrade (400, 426): nothing
		// was played, so the recorded connection is not marked played.
		if !repeated {
			p.ids.mu.Lock()
			p.wsPlayed[i] = false
			p.ids.mu.Unlock()
		}
		p.addMiss(Miss{Kind: "websocket connection", Request: summary, Reason: "the upgrade failed: " + err.Error()})
		return
	}
	p.played(repeated)
	c.SetReadLimit(p.opts.MaxMessageSize)
	s := &session{p: p, sc: sc, c: c, calls: map[string]*liveCall{}, changed: make(chan struct{})}
	if !p.track(s) {
		c.Close(websocket.StatusGoingAway, "wireproof playback is stopping")
		return
	}
	defer p.untrack(s)
	s.run()
}

// session plays one recorded connection to one client.
type session struct {
	p  *Player
	sc *script
	c  *websocket.Conn

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	start  time.Time // when the connection was accepted

	writeMu sync.Mutex

	mu       sync.Mutex
	clientN  int         // client messages received
	clientAt []time.Time // when each arrived
	calls    map[string]*liveCall
	changed  chan struct{} // closed and replaced whenever the above change, once waited on
	waited   bool          // changed was handed to a waiter since it was made
	ndbuf    []byte

	// With Timing.Fast, the server's own messages (sc.loose) are sent by
	// whoever holds looseBusy: the goroutine reading the client, when no
	// call is playing, or else playLooseFast, woken by looseWake.
	fast        bool
	looseNext   int  // the next to send
	looseBusy   bool // someone is sending them
	looseFailed bool // a send failed: no more are sent
	looseWake   chan struct{}

	// Read by the goroutine reading the client (readLoop, playRaw) only.
	rbuf []byte   // the client's last message, reused for the next
	msgs [][]byte // its messages (splitFrame), reused
}

// liveCall is a recorded call being played to a client's request.
type liveCall struct {
	rec         *call
	id          json.RawMessage // the client's request id, as it sent it
	acks        []time.Time     // when the client's Acks arrived
	interrupted bool
	interruptAt time.Time
	done        chan struct{} // closed when its replies are played
}

// signal wakes everything waiting on the session's state. Caller holds mu.
// A channel nobody took is left open: nothing waits on it.
func (s *session) signal() {
	if !s.waited {
		return
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.waited = false
}

// waitFor waits until cond (called with mu held) is true, and returns false
// if the session ended first.
func (s *session) waitFor(cond func() bool) bool {
	for {
		s.mu.Lock()
		if cond() {
			s.mu.Unlock()
			return true
		}
		ch := s.changed
		s.waited = true
		s.mu.Unlock()
		select {
		case <-ch:
		case <-s.ctx.Done():
			return false
		}
	}
}

// write sends one message. The connection's reads and writes take no
// context of their own (a cancellable one costs coder/websocket a
// context.AfterFunc per frame): the session's context closes the connection
// when it ends (run), which ends a write or read in progress as the
// context would.
func (s *session) write(typ websocket.MessageType, b []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.c.Write(context.Background(), typ, b)
}

// read reads the client's next message into the session's buffer: what it
// returns is valid until the next read, and whatever keeps a part of it
// copies it.
func (s *session) read() (websocket.MessageType, []byte, error) {
	typ, r, err := s.c.Reader(context.Background())
	if err != nil {
		return 0, nil, err
	}
	b := s.rbuf[:0]
	if b == nil {
		b = make([]byte, 0, 512)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, err
		}
	}
	if cap(b) <= maxKeptReadBuffer {
		s.rbuf = b
	}
	return typ, b, nil
}

// maxKeptReadBuffer is the largest read buffer a session keeps for the next
// message: one big message does not pin its size for the connection's life.
const maxKeptReadBuffer = 1 << 20

// send writes one server message in the connection's framing.
func (s *session) send(raw []byte) error {
	if s.sc.ndjson {
		line := make([]byte, 0, len(raw)+1)
		return s.write(websocket.MessageText, append(append(line, raw...), '\n'))
	}
	return s.write(websocket.MessageText, raw)
}

func (s *session) run() {
	s.ctx, s.cancel = context.WithCancel(s.p.ctx)
	s.start = time.Now()
	defer s.cancel()
	closed := make(chan struct{})
	stop := context.AfterFunc(s.ctx, func() {
		s.c.CloseNow()
		close(closed)
	})
	defer func() {
		if !stop() {
			<-closed
		}
	}()
	switch {
	case s.sc.proto == protoRaw:
		s.playRaw()
	case s.p.opts.Timing.Fast:
		s.fast = true
		s.looseWake = make(chan struct{}, 1)
		s.wg.Add(1)
		go s.playLooseFast()
		s.wakeLoose() // what the server sent before the client's first message
		s.readLoop()
	default:
		s.wg.Add(1)
		go s.playLoose()
		s.readLoop()
	}
	s.cancel()
	s.wg.Wait()
	s.c.CloseNow()
}

// readLoop reads the client's messages until it closes.
func (s *session) readLoop() {
	for {
		typ, data, err := s.read()
		if err != nil {
			s.readEnded(err)
			return
		}
		now := time.Now()
		if typ == websocket.MessageBinary {
			s.clientMessage(now, nil)
			s.malformed(binaryMessage(data), "a binary frame: "+s.sc.proto.String()+" is spoken in text frames")
			s.sendLoose()
			continue
		}
		s.mu.Lock()
		s.msgs = appendFrame(s.msgs[:0], data, s.sc.ndjson, &s.ndbuf)
		s.mu.Unlock()
		for _, raw := range s.msgs {
			s.clientMessage(now, raw)
			s.sendLoose()
		}
	}
}

// readEnded notes why the client's side ended when it is the client's
// fault: a message over the read limit (the connection is closed with 1009)
// is a miss, explained; a close or a dropped connection is not.
func (s *session) readEnded(err error) {
	if errors.Is(err, websocket.ErrMessageTooBig) {
		s.p.addMiss(Miss{Kind: "message", Request: "a message over the " + itoa(int(s.p.opts.MaxMessageSize)) + "-byte read limit",
			Reason: "the connection recorded as " + s.sc.conn.ID + " was closed with 1009 (message too big)"})
	}
}

// playRaw plays a connection of an unknown protocol in recorded order, in
// step with the client: the server messages recorded before the client's
// first message, then after each client message (compared with the recorded
// one) the server messages recorded after it, each with its recorded gap.
func (s *session) playRaw() {
	t := s.p.opts.Timing
	msgs := s.sc.msgs
	prevT, prevWall := s.sc.conn.T, s.start
	i := 0
	serve := func() bool {
		for ; i < len(msgs) && msgs[i].Dir == bundle.DirServerToClient; i++ {
			m := msgs[i]
			if t.wait(s.ctx, prevWall, m.T-prevT) != nil {
				return false
			}
			typ := websocket.MessageText
			if m.Binary {
				typ = websocket.MessageBinary
			}
			if s.write(typ, s.p.ids.apply(m.Raw)) != nil {
				return false
			}
			prevT, prevWall = m.T, time.Now()
		}
		return true
	}
	for k := 0; serve(); k++ {
		_, data, err := s.read()
		if err != nil {
			s.readEnded(err)
			return
		}
		if i == len(msgs) {
			s.p.addMiss(Miss{Kind: "message", Request: oneLine(string(data), 200), Reason: "the recorded connection " + s.sc.conn.ID + " has no message " + itoa(k+1) + " from the client"})
			continue
		}
		s.compareRaw(k, msgs[i], data)
		prevT, prevWall = msgs[i].T, time.Now()
		i++
	}
}

// compareRaw records a miss when the client's k-th message differs from the
// recorded one.
func (s *session) compareRaw(k int, m wireMsg, got []byte) {
	if bytes.Equal(m.Raw, got) {
		return // the same bytes: nothing differs, nothing to learn
	}
	rec := request{Body: decodeBody(m.Raw, "")}
	live := request{Body: decodeBody(got, "")}
	s.p.ids.mu.Lock()
	b := s.p.ids.begin()
	ok := b.unifyRequest(&rec, &live)
	if ok {
		b.commit()
	}
	s.p.ids.mu.Unlock()
	if ok {
		return
	}
	s.p.addMiss(Miss{
		Kind:    "message",
		Request: oneLine(string(got), 200),
		Closest: "message " + itoa(k+1) + " of " + s.sc.conn.ID + ": " + oneLine(string(m.Raw), 200), ClosestSeq: cmp.Or(m.Seq, s.sc.conn.Seq),
		Diff: explain(rec.Body, live.Body),
	})
}

// sendLoose sends, with Timing.Fast, the server's own messages (those
// answering no call) that the client messages received so far have made
// due. When no call is playing, nothing else is sent beside them, so the
// goroutine reading the client sends them itself, as playRaw does, and no
// goroutine is woken for every client message; else playLooseFast sends
// them, beside the calls' replies, as playLoose would. Without Timing.Fast
// it does nothing: playLoose plays them with their gaps.
func (s *session) sendLoose() {
	if !s.fast {
		return
	}
	s.mu.Lock()
	calls := len(s.calls)
	s.mu.Unlock()
	if calls > 0 || !s.sendDueLoose() {
		s.wakeLoose()
	}
}

// wakeLoose has playLooseFast send what is due.
func (s *session) wakeLoose() {
	select {
	case s.looseWake <- struct{}{}:
	default: // already woken
	}
}

// playLooseFast sends the server's own messages the goroutine reading the
// client leaves to it (wakeLoose), until the session ends.
func (s *session) playLooseFast() {
	defer s.wg.Done()
	for {
		select {
		case <-s.looseWake:
		case <-s.ctx.Done():
			return
		}
		// If the goroutine reading the client is sending them, it wakes
		// this one again when it leaves any.
		s.sendDueLoose()
	}
}

// sendDueLoose sends the loose messages due now, in recorded order, and
// reports false when someone else is sending them (looseBusy).
func (s *session) sendDueLoose() bool {
	loose := s.sc.loose
	s.mu.Lock()
	if s.looseBusy {
		s.mu.Unlock()
		return false
	}
	s.looseBusy = true
	for !s.looseFailed && s.looseNext < len(loose) && loose[s.looseNext].After <= s.clientN {
		l := loose[s.looseNext]
		s.mu.Unlock()
		err := s.ctx.Err()
		if err == nil {
			err = s.send(s.p.ids.apply(l.Raw))
		}
		s.mu.Lock()
		if err != nil {
			s.looseFailed = true
			break
		}
		s.looseNext++
	}
	s.looseBusy = false
	s.mu.Unlock()
	return true
}

// playLoose sends the server's own messages (those answering no call) after
// the client message recorded before each, with the recorded gap.
func (s *session) playLoose() {
	defer s.wg.Done()
	t := s.p.opts.Timing
	prevT, prevWall := int64(-1), time.Time{}
	for _, l := range s.sc.loose {
		after := l.After
		if !s.waitFor(func() bool { return s.clientN >= after }) {
			return
		}
		causeT, causeWall := l.CauseT, s.start
		s.mu.Lock()
		if after > 0 && after <= len(s.clientAt) {
			causeWall = s.clientAt[after-1]
		}
		s.mu.Unlock()
		if prevT > causeT {
			causeT, causeWall = prevT, prevWall
		}
		if t.wait(s.ctx, causeWall, l.T-causeT) != nil {
			return
		}
		if s.send(s.p.ids.apply(l.Raw)) != nil {
			return
		}
		prevT, prevWall = l.T, time.Now()
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
