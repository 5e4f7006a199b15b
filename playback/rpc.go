package playback

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/wireproof/wireproof/protocol/effectrpc"
)

// clientMessage handles one client message on an RPC connection: a Request
// is matched and played, an Ack paces its stream, an Interrupt ends it as
// recorded, a Ping is answered. raw is nil for a binary frame.
func (s *session) clientMessage(now time.Time, raw []byte) {
	s.mu.Lock()
	s.clientN++
	if !s.fast {
		s.clientAt = append(s.clientAt, now) // playLoose's causes
	}
	s.signal()
	s.mu.Unlock()
	if raw == nil {
		return
	}
	m, err := effectrpc.DecodeMessage(raw)
	if err != nil {
		if s.sc.proto == protoJSONRPC && isNotification(raw) {
			return // a JSON-RPC notification: nothing to answer
		}
		s.malformed(oneLine(string(raw), 200), "not "+article(s.sc.proto)+" message: "+err.Error())
		return
	}
	switch m.Tag {
	case effectrpc.TagRequest:
		s.request(now, m, json.RawMessage(bytes.Clone(m.ID))) // echoed as sent; raw is the reader's
	case effectrpc.TagAck, effectrpc.TagInterrupt:
		s.mu.Lock()
		lc := s.calls[m.Key()]
		if lc != nil {
			if m.Tag == effectrpc.TagAck {
				lc.acks = append(lc.acks, now)
			} else if !lc.interrupted {
				lc.interrupted, lc.interruptAt = true, now
			}
			s.signal()
		}
		s.mu.Unlock()
		if lc != nil && m.Tag == effectrpc.TagInterrupt {
			// Answer the Interrupt before reading on: a client that closes
			// the socket right after it still gets the answer, as from a
			// live server.
			select {
			case <-lc.done:
			case <-s.ctx.Done():
			}
		}
	case effectrpc.TagPing:
		if s.sc.proto == protoJSONRPC {
			s.send([]byte(`{"jsonrpc":"2.0","method":"@effect/rpc/Pong"}`))
		} else {
			s.send([]byte(`{"_tag":"Pong"}`))
		}
	}
}

// malformed answers a client message the connection's protocol cannot
// decode as a live server would (an Effect Defect, a JSON-RPC error with a
// null id) and counts it as a miss, explained: a client that speaks the
// protocol wrongly is told so, and --strict fails.
func (s *session) malformed(summary, reason string) {
	miss := Miss{Kind: "message", Request: summary,
		Reason: reason + " (on a connection recorded as " + s.sc.conn.ID + ")"}
	miss = s.p.addMiss(miss)
	text := miss.String()
	if s.sc.proto == protoJSONRPC {
		b, _ := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   any             `json:"error"`
		}{"2.0", json.RawMessage("null"), struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    Miss   `json:"data"`
		}{-32600, text, miss}})
		s.send(b)
		return
	}
	defect, _ := json.Marshal(text)
	b, _ := json.Marshal(effectrpc.Message{Tag: effectrpc.TagDefect, Defect: defect})
	s.send(b)
}

// isNotification reports whether raw is a JSON-RPC notification: a method
// and no id.
func isNotification(raw []byte) bool {
	var env envelope
	return json.Unmarshal(raw, &env) == nil && env.JSONRPC != "" && env.Method != "" && len(env.ID) == 0 &&
		!strings.HasPrefix(env.Method, "@effect/rpc/") // Effect's control messages must decode
}

// article is the protocol's name with its indefinite article.
func article(p protocol) string {
	if p == protoEffect {
		return "an " + p.String()
	}
	return "a " + p.String()
}

// binaryMessage summarises a binary frame for a miss.
func binaryMessage(data []byte) string {
	const show = 32
	h := hex.EncodeToString(data[:min(len(data), show)])
	if len(data) > show {
		h += "..."
	}
	return "binary frame of " + itoa(len(data)) + " bytes: " + h
}

// request matches a client Request to a recorded call and plays its
// replies, or answers it with the miss.
func (s *session) request(now time.Time, m effectrpc.Message, id json.RawMessage) {
	live := rpcRequest(m.Method, m.Payload)
	sc := s.sc
	p := s.p
	p.ids.mu.Lock()
	i, repeated := p.pick(sc.reqs, sc.played, &live, nil)
	var miss Miss
	if i < 0 {
		miss = p.closest("rpc call", sc.reqs, sc.played, func(i int) (uint64, string) {
			return sc.seqs[i], sc.conn.ID + " " + sc.calls[i].summary()
		}, &live, m.Method+" "+oneLine(string(m.Payload), 200))
	} else {
		// A call an earlier connection to the same recorded one played
		// (the client reconnected) is played again: repeated, not new.
		repeated = repeated || sc.ever[i]
		sc.ever[i] = true
	}
	p.ids.mu.Unlock()
	if i < 0 {
		miss = p.addMiss(miss)
		s.send(s.missReply(id, miss))
		return
	}
	p.played(repeated)
	lc := &liveCall{rec: sc.calls[i], id: id, done: make(chan struct{})}
	s.mu.Lock()
	key := m.Key()
	s.calls[key] = lc
	s.mu.Unlock()
	s.wg.Add(1)
	go s.playCall(key, lc, now)
}

// missReply is the error a missed request gets: a Die for Effect, an error
// response for JSON-RPC.
func (s *session) missReply(id json.RawMessage, miss Miss) []byte {
	text := miss.String()
	if s.sc.proto == protoJSONRPC {
		b, _ := json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   any             `json:"error"`
		}{"2.0", id, struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    Miss   `json:"data"`
		}{-32601, text, miss}})
		return b
	}
	defect, _ := json.Marshal(text)
	cause, _ := json.Marshal([]effectrpc.CauseItem{{Tag: effectrpc.CauseDie, Defect: defect}})
	b, _ := json.Marshal(effectrpc.Message{Tag: effectrpc.TagExit, RequestID: effectrpc.RequestID(id), Exit: &effectrpc.Exit{Tag: effectrpc.ExitFailure, Cause: cause}})
	return b
}

// interruptExit is the answer to an Interrupt the recording has none for.
func (s *session) interruptExit(id json.RawMessage) []byte {
	cause, _ := json.Marshal([]effectrpc.CauseItem{{Tag: effectrpc.CauseInterrupt, FiberID: json.RawMessage("0")}})
	b, _ := json.Marshal(effectrpc.Message{Tag: effectrpc.TagExit, RequestID: effectrpc.RequestID(id), Exit: &effectrpc.Exit{Tag: effectrpc.ExitFailure, Cause: cause}})
	return b
}

// rewrite gives a recorded reply the client's request id and ids.
func (s *session) rewrite(r reply, id json.RawMessage) []byte {
	return s.p.ids.apply(spliceValue(r.Raw, r.ID, id))
}

// playCall sends a call's recorded replies: each after the Acks recorded
// before it have arrived, with its recorded gap from what enabled it. Once
// the client interrupts, only what was recorded after the interrupt is sent
// (or, if nothing was, an Exit that says interrupted), and of it no chunk
// whose Ack before it the client did not send.
func (s *session) playCall(key string, lc *liveCall, start time.Time) {
	defer s.wg.Done()
	defer close(lc.done)
	defer func() {
		s.mu.Lock()
		if s.calls[key] == lc {
			delete(s.calls, key)
		}
		s.mu.Unlock()
	}()
	t := s.p.opts.Timing
	rec := lc.rec
	prevT, prevWall := rec.T, start
	for i := 0; i < len(rec.replies); i++ {
		r := rec.replies[i]
		need := r.Acks
		if !s.waitFor(func() bool { return lc.interrupted || (!r.AfterInterrupt && len(lc.acks) >= need) }) {
			return
		}
		s.mu.Lock()
		interrupted, interruptAt, acks := lc.interrupted, lc.interruptAt, len(lc.acks)
		var ackAt time.Time
		if need > 0 && need <= len(lc.acks) {
			ackAt = lc.acks[need-1]
		}
		s.mu.Unlock()
		trigT, trigWall := prevT, prevWall
		jumped := false
		if interrupted && !r.AfterInterrupt {
			// Skip to what the recording holds after its interrupt.
			j := i
			for j < len(rec.replies) && !rec.replies[j].AfterInterrupt {
				j++
			}
			if j == len(rec.replies) {
				s.send(s.interruptExit(lc.id))
				return
			}
			i, jumped = j, true
			r = rec.replies[i]
			trigWall = interruptAt
		}
		if interrupted && r.Chunk && r.Acks > acks {
			// The recorded server sent this chunk after the interrupt
			// because the chunk before it had been acknowledged; this
			// client interrupted without that Ack, and a live server would
			// not send it.
			continue
		}
		if !jumped && need > 0 && !ackAt.IsZero() {
			if at := rec.ackTs[need-1]; at > trigT {
				trigT, trigWall = at, ackAt
			}
		}
		if t.wait(s.ctx, trigWall, r.T-trigT) != nil {
			return
		}
		if s.send(s.rewrite(r, lc.id)) != nil {
			return
		}
		prevT, prevWall = r.T, time.Now()
	}
}
