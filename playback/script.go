package playback

import (
	"bytes"
	"cmp"
	"encoding/json"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
)

// protocol is what a recorded WebSocket connection speaks.
type protocol int

const (
	protoRaw     protocol = iota // anything else: played message by message
	protoEffect                  // Effect RPC, json or ndjson serialization
	protoJSONRPC                 // JSON-RPC 2.0
)

// idKey is the top-level key of a reply that carries its request's id.
func (p protocol) idKey() string {
	if p == protoJSONRPC {
		return "id"
	}
	return "requestId"
}

func (p protocol) String() string {
	return [...]string{"messages", "Effect RPC", "JSON-RPC 2.0"}[p]
}

// wireMsg is one recorded message: an RPC message of a frame (a frame may
// hold several: an array, or ndjson lines), or a whole frame of another
// protocol.
type wireMsg struct {
	Seq    uint64 // of the frame that carried it (a frame may carry several)
	T      int64
	Dir    bundle.Dir
	Binary bool
	Raw    []byte
	Msg    effectrpc.Message // decoded by effectrpc.DecodeMessage
	RPC    bool              // Msg is valid
	ID     json.RawMessage
}

// script is a recorded connection prepared for playback.
type script struct {
	conn   *Conn
	proto  protocol
	ndjson bool
	msgs   []wireMsg
	calls  []*call   // RPC: recorded client requests, in order
	reqs   []request // RPC: calls as matching sees them (method, payload)
	loose  []*loose  // RPC: server messages not answering a call
	played []bool    // parallel to calls: played on this script's connection
	ever   []bool    // parallel to calls: played on any connection to conn, shared by its scripts
	seqs   []uint64  // parallel to calls
}

// again is the script for a reconnection to the same recorded connection:
// the calls are played afresh, what earlier connections played stays in
// ever. The decoded recording is shared, not decoded again: nothing playing
// changes it.
func (s *script) again() *script {
	n := *s
	n.played = make([]bool, len(s.calls))
	return &n
}

// call is one recorded RPC call: the client's request and the server's
// replies to it.
type call struct {
	seq     uint64 // the event of the frame that carried the request
	T       int64
	method  string
	payload json.RawMessage
	replies []reply
	ackTs   []int64 // when the client's Acks were recorded
}

func (c *call) summary() string {
	return c.method + " " + oneLine(string(c.payload), 200)
}

// reply is one recorded server message answering a call.
type reply struct {
	T   int64
	Raw []byte
	// ID is where Raw's request id lies (requestId, or JSON-RPC's id),
	// found once when the script is made: every playing of the reply puts
	// the client's id there.
	ID valueSpan
	// Acks is how many Acks the client had sent for the call before it: a
	// stream's next chunk waits for the Ack of the one before.
	Acks int
	// AfterInterrupt: recorded after the client interrupted the call.
	AfterInterrupt bool
	// Chunk: a stream's chunk (not its Exit), which a live server sends
	// only once the chunk before it is acknowledged, interrupted or not.
	Chunk bool
}

// loose is a server message that answers no call (a Defect, a JSON-RPC
// notification or request from the server), played after the client
// message that preceded it.
type loose struct {
	T      int64
	Raw    []byte
	After  int   // client messages recorded before it
	CauseT int64 // when the last of them was recorded (or the conn opened)
}

// envelope reads the keys playback rewrites.
type envelope struct {
	JSONRPC   string          `json:"jsonrpc"`
	ID        json.RawMessage `json:"id"`
	RequestID json.RawMessage `json:"requestId"`
	Method    string          `json:"method"`
}

// splitFrame splits a frame into its messages: ndjson lines (buf holds a
// line left open by the previous frame of the same direction), or the
// elements of a JSON array, or the frame itself.
func splitFrame(data []byte, ndjson bool, buf *[]byte) [][]byte {
	return appendFrame(nil, data, ndjson, buf)
}

// appendFrame is splitFrame appending to out. An ndjson line or an array
// element is a copy; a frame that is one message is data itself.
func appendFrame(out [][]byte, data []byte, ndjson bool, buf *[]byte) [][]byte {
	if ndjson {
		*buf = append(*buf, data...)
		for {
			i := bytes.IndexByte(*buf, '\n')
			if i < 0 {
				break
			}
			if line := bytes.TrimSpace((*buf)[:i]); len(line) > 0 {
				out = append(out, bytes.Clone(line))
			}
			*buf = (*buf)[i+1:]
		}
		if len(*buf) == 0 {
			*buf = nil
		}
		return out
	}
	b := bytes.TrimSpace(data)
	if len(b) > 0 && b[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) == nil {
			for _, e := range elems {
				out = append(out, e)
			}
			return out
		}
	}
	return append(out, data)
}

// newScript decodes a recorded connection.
func newScript(c *Conn) *script {
	s := &script{conn: c}
	for _, f := range c.Frames {
		if !f.Binary && len(f.Data) > 0 && f.Data[len(f.Data)-1] == '\n' {
			s.ndjson = true
			break
		}
	}
	var bufs [2][]byte
	effect, jsonrpc := 0, 0
	for _, f := range c.Frames {
		if f.Binary {
			s.msgs = append(s.msgs, wireMsg{Seq: f.Seq, T: f.T, Dir: f.Dir, Binary: true, Raw: f.Data})
			continue
		}
		d := 0
		if f.Dir == bundle.DirServerToClient {
			d = 1
		}
		for _, raw := range splitFrame(f.Data, s.ndjson, &bufs[d]) {
			w := wireMsg{Seq: f.Seq, T: f.T, Dir: f.Dir, Raw: raw}
			var env envelope
			if m, err := effectrpc.DecodeMessage(raw); err == nil {
				w.Msg, w.RPC = m, true
				json.Unmarshal(raw, &env)
				if env.JSONRPC != "" {
					jsonrpc++
					w.ID = env.ID
				} else {
					effect++
					w.ID = env.ID
					if len(env.RequestID) > 0 {
						w.ID = env.RequestID
					}
				}
			} else if json.Unmarshal(raw, &env) == nil && env.JSONRPC != "" {
				// A JSON-RPC notification (no id): replay leaves it out.
				jsonrpc++
			}
			s.msgs = append(s.msgs, w)
		}
	}
	switch {
	case jsonrpc > 0 && jsonrpc >= effect:
		s.proto = protoJSONRPC
	case effect > 0:
		s.proto = protoEffect
	}
	if s.proto != protoRaw {
		s.buildCalls()
	}
	return s
}

// buildCalls ties every server message to the call it answers.
func (s *script) buildCalls() {
	open := map[string]*call{}
	interrupted := map[*call]bool{}
	clientMsgs, causeT := 0, s.conn.T
	for _, w := range s.msgs {
		if w.Dir == bundle.DirClientToServer {
			clientMsgs++
			causeT = w.T
			if !w.RPC {
				continue
			}
			switch w.Msg.Tag {
			case effectrpc.TagRequest:
				c := &call{seq: cmp.Or(w.Seq, s.conn.Seq), T: w.T, method: w.Msg.Method, payload: w.Msg.Payload}
				open[w.Msg.Key()] = c
				s.calls = append(s.calls, c)
				s.reqs = append(s.reqs, rpcRequest(c.method, c.payload))
			case effectrpc.TagAck:
				if c := open[w.Msg.Key()]; c != nil {
					c.ackTs = append(c.ackTs, w.T)
				}
			case effectrpc.TagInterrupt:
				if c := open[w.Msg.Key()]; c != nil {
					interrupted[c] = true
				}
			}
			continue
		}
		if w.RPC {
			switch w.Msg.Tag {
			case effectrpc.TagPong:
				continue // Pings are answered live
			case effectrpc.TagChunk, effectrpc.TagExit:
				if c := open[w.Msg.Key()]; c != nil {
					c.replies = append(c.replies, reply{T: w.T, Raw: w.Raw, ID: topLevelValue(w.Raw, s.proto.idKey()), Acks: len(c.ackTs), AfterInterrupt: interrupted[c], Chunk: w.Msg.Tag == effectrpc.TagChunk})
					continue
				}
			}
		}
		s.loose = append(s.loose, &loose{T: w.T, Raw: w.Raw, After: clientMsgs, CauseT: causeT})
	}
	s.played = make([]bool, len(s.calls))
	s.ever = make([]bool, len(s.calls))
	s.seqs = make([]uint64, len(s.calls))
	for i, c := range s.calls {
		s.seqs[i] = c.seq
	}
}

// rpcRequest is an RPC call as matching sees it: the method in place of an
// HTTP method, the payload as the body.
func rpcRequest(method string, payload json.RawMessage) request {
	r := request{Method: method}
	if v, ok := decodeJSON(payload); ok {
		r.Body = v
	} else if len(bytes.TrimSpace(payload)) > 0 {
		r.Body = string(payload)
	}
	return r
}

// replaceTopLevel returns raw (a JSON object) with the value of its
// top-level key replaced by val, keeping the key order; raw unchanged if it
// has no such key.
func replaceTopLevel(raw []byte, key string, val []byte) []byte {
	return spliceValue(raw, topLevelValue(raw, key), val)
}

// valueSpan is where a value lies in a JSON text, [start, end); end 0 when
// there is none.
type valueSpan struct{ start, end int }

// topLevelValue finds the value of the first top-level key of raw (a JSON
// object) named key.
func topLevelValue(raw []byte, key string) valueSpan {
	if !json.Valid(raw) {
		return valueSpan{}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return valueSpan{}
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return valueSpan{}
		}
		start := int(dec.InputOffset())
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return valueSpan{}
		}
		end := int(dec.InputOffset())
		if k != key {
			continue
		}
		for start < end && (raw[start] == ' ' || raw[start] == '\t' || raw[start] == '\n' || raw[start] == '\r' || raw[start] == ':') {
			start++
		}
		return valueSpan{start, end}
	}
	return valueSpan{}
}

// spliceValue returns raw with the value at sp replaced by val, or raw
// itself when sp is empty.
func spliceValue(raw []byte, sp valueSpan, val []byte) []byte {
	if sp.end == 0 {
		return raw
	}
	out := make([]byte, 0, len(raw)-(sp.end-sp.start)+len(val))
	out = append(out, raw[:sp.start]...)
	out = append(out, val...)
	return append(out, raw[sp.end:]...)
}
