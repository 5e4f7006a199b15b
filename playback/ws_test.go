package playback

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/t3"
)

// effectServer is a small Effect RPC server: "stream" sends three chunks,
// each only after the Ack of the one before, and answers an Interrupt with
// an interrupted Exit; "echo" answers its payload with a server-made id.
// ndjson selects the ndjson serialization.
func effectServer(t *testing.T, ndjson bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		var wmu sync.Mutex
		send := func(m effectrpc.Message) {
			b, _ := json.Marshal(m)
			if ndjson {
				b = append(b, '\n')
			}
			wmu.Lock()
			defer wmu.Unlock()
			c.Write(ctx, websocket.MessageText, b)
		}
		type stream struct {
			ack       chan struct{}
			interrupt chan struct{}
		}
		var mu sync.Mutex
		streams := map[string]*stream{}
		var wg sync.WaitGroup
		defer wg.Wait()
		var buf []byte
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			for _, raw := range splitFrame(data, ndjson, &buf) {
				var m effectrpc.Message
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Errorf("effect server: %v", err)
					return
				}
				switch m.Tag {
				case effectrpc.TagPing:
					send(effectrpc.Message{Tag: effectrpc.TagPong})
				case effectrpc.TagAck, effectrpc.TagInterrupt:
					mu.Lock()
					s := streams[m.RequestID.Key()]
					mu.Unlock()
					if s == nil {
						continue
					}
					if m.Tag == effectrpc.TagAck {
						s.ack <- struct{}{}
					} else {
						close(s.interrupt)
					}
				case effectrpc.TagRequest:
					switch m.Method {
					case "echo":
						v, _ := json.Marshal(map[string]any{"echo": m.Payload, "made": t3.NewUUID()})
						send(effectrpc.Message{Tag: effectrpc.TagExit, RequestID: m.ID, Exit: &effectrpc.Exit{Tag: effectrpc.ExitSuccess, Value: v}})
					case "stream":
						s := &stream{ack: make(chan struct{}, 1), interrupt: make(chan struct{})}
						mu.Lock()
						streams[m.ID.Key()] = s
						mu.Unlock()
						wg.Add(1)
						go func(m effectrpc.Message) {
							defer wg.Done()
							for n := 1; n <= 3; n++ {
								v, _ := json.Marshal([]any{map[string]any{"n": n, "of": m.Payload}})
								send(effectrpc.Message{Tag: effectrpc.TagChunk, RequestID: m.ID, Values: v})
								select {
								case <-s.ack:
								case <-s.interrupt:
									send(effectrpc.Message{Tag: effectrpc.TagExit, RequestID: m.ID, Exit: &effectrpc.Exit{Tag: effectrpc.ExitFailure, Cause: json.RawMessage(`[{"_tag":"Interrupt","fiberId":41}]`)}})
									return
								case <-ctx.Done():
									return
								}
							}
							send(effectrpc.Message{Tag: effectrpc.TagExit, RequestID: m.ID, Exit: &effectrpc.Exit{Tag: effectrpc.ExitSuccess, Value: json.RawMessage("null")}})
						}(m)
					}
				}
			}
		}
	})
}

// rpcConn is a bare Effect RPC client for tests: it writes messages and
// reads them one at a time.
type rpcConn struct {
	t      *testing.T
	c      *websocket.Conn
	ndjson bool
	queue  [][]byte
	buf    []byte
}

func dialRPC(t *testing.T, base string, ndjson bool) *rpcConn {
	t.Helper()
	c, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(base, "http")+"/ws?wsTicket="+t3.NewUUID(), nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return &rpcConn{t: t, c: c, ndjson: ndjson}
}

func (r *rpcConn) send(format string, args ...any) {
	r.t.Helper()
	b := []byte(fmt.Sprintf(format, args...))
	if r.ndjson {
		b = append(b, '\n')
	}
	if err := r.c.Write(r.t.Context(), websocket.MessageText, b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *rpcConn) next() effectrpc.Message {
	r.t.Helper()
	for len(r.queue) == 0 {
		ctx, cancel := context.WithTimeout(r.t.Context(), 30*time.Second)
		_, data, err := r.c.Read(ctx)
		cancel()
		if err != nil {
			r.t.Fatalf("read: %v", err)
		}
		if r.ndjson && !bytes.HasSuffix(data, []byte("\n")) {
			r.t.Fatalf("ndjson frame %q does not end its line", data)
		}
		r.queue = append(r.queue, splitFrame(data, r.ndjson, &r.buf)...)
	}
	raw := r.queue[0]
	r.queue = r.queue[1:]
	var m effectrpc.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		r.t.Fatalf("message %s: %v", raw, err)
	}
	return m
}

// expect reads the next message and checks its tag and request id.
func (r *rpcConn) expect(tag string, id string) effectrpc.Message {
	r.t.Helper()
	m := r.next()
	if m.Tag != tag || (id != "" && string(m.RequestID) != id) {
		b, _ := json.Marshal(m)
		r.t.Fatalf("got %s, want %s for request id %s", b, tag, id)
	}
	return m
}

// driveEffect runs the conversation both the recording and the playback
// client have: a stream acked to its end, an echo, a stream interrupted
// after two chunks. ids are the request ids' JSON tokens, thread the id the
// client made. In playback it also checks that Acks pace the stream.
func driveEffect(t *testing.T, c *rpcConn, ids [3]string, thread string, checkPacing bool) (echo json.RawMessage) {
	t.Helper()
	c.send(`{"_tag":"Request","id":%s,"tag":"stream","payload":{"threadId":%q},"headers":[]}`, ids[0], thread)
	for n := 1; n <= 3; n++ {
		m := c.expect(effectrpc.TagChunk, ids[0])
		if !bytes.Contains(m.Values, []byte(thread)) || !bytes.Contains(m.Values, []byte(fmt.Sprintf(`"n":%d`, n))) {
			t.Errorf("chunk %d values %s: want n %d of thread %s", n, m.Values, n, thread)
		}
		if checkPacing && n == 1 {
			// The next chunk waits for this chunk's Ack: a Ping sent now is
			// answered before anything else arrives.
			c.send(`{"_tag":"Ping"}`)
			c.expect(effectrpc.TagPong, "")
		}
		c.send(`{"_tag":"Ack","requestId":%s}`, ids[0])
	}
	if m := c.expect(effectrpc.TagExit, ids[0]); m.Exit.Tag != effectrpc.ExitSuccess {
		t.Errorf("stream exit %s, want Success", m.Exit.Tag)
	}
	c.send(`{"_tag":"Request","id":%s,"tag":"echo","payload":{"threadId":%q,"text":"hello"},"headers":[]}`, ids[1], thread)
	m := c.expect(effectrpc.TagExit, ids[1])
	echo = m.Exit.Value
	c.send(`{"_tag":"Request","id":%s,"tag":"stream","payload":{"threadId":%q},"headers":[]}`, ids[2], thread)
	c.expect(effectrpc.TagChunk, ids[2])
	c.send(`{"_tag":"Ack","requestId":%s}`, ids[2])
	c.expect(effectrpc.TagChunk, ids[2])
	c.send(`{"_tag":"Interrupt","requestId":%s}`, ids[2])
	if m := c.expect(effectrpc.TagExit, ids[2]); m.Exit.Tag != effectrpc.ExitFailure || !bytes.Contains(m.Exit.Cause, []byte(`"Interrupt"`)) {
		t.Errorf("interrupted stream exit %s %s, want an Interrupt failure", m.Exit.Tag, m.Exit.Cause)
	}
	return echo
}

func TestEffectRPC(t *testing.T) {
	for _, ndjson := range []bool{false, true} {
		name := map[bool]string{false: "json", true: "ndjson"}[ndjson]
		t.Run(name, func(t *testing.T) {
			recThread := t3.NewUUID()
			var recEcho json.RawMessage
			path := recordSession(t, effectServer(t, ndjson), func(base string) {
				c := dialRPC(t, base, ndjson)
				recEcho = driveEffect(t, c, [3]string{`"1"`, `"2"`, `"3"`}, recThread, false)
				c.c.Close(websocket.StatusNormalClosure, "")
			})
			srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
			c := dialRPC(t, srv.URL, ndjson)
			thread := t3.NewUUID()
			// Numbers where the recording has strings: each reply carries the
			// client's own id token.
			echo := driveEffect(t, c, [3]string{`7`, `8`, `9`}, thread, true)
			want := bytes.ReplaceAll(recEcho, []byte(recThread), []byte(thread))
			if !bytes.Equal(echo, want) {
				t.Errorf("echo = %s, want the recorded %s with the client's thread", echo, want)
			}

			// A request nothing recorded matches gets a Die naming the closest.
			c.send(`{"_tag":"Request","id":10,"tag":"echo","payload":{"threadId":%q,"text":"bye"},"headers":[]}`, thread)
			m := c.expect(effectrpc.TagExit, "10")
			var cause []effectrpc.CauseItem
			json.Unmarshal(m.Exit.Cause, &cause)
			if m.Exit.Tag != effectrpc.ExitFailure || len(cause) != 1 || cause[0].Tag != effectrpc.CauseDie {
				t.Fatalf("miss exit %s %s, want a Die", m.Exit.Tag, m.Exit.Cause)
			}
			var defect string
			json.Unmarshal(cause[0].Defect, &defect)
			for _, s := range []string{"closest recorded", "echo", `"hello"`, `"bye"`} {
				if !strings.Contains(defect, s) {
					t.Errorf("defect %q does not mention %s", defect, s)
				}
			}
			c.c.Close(websocket.StatusNormalClosure, "")
			rep, err := srv.Close(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Misses) != 1 || rep.Misses[0].Kind != "rpc call" || len(rep.Unplayed) != 0 {
				t.Errorf("report %+v: want the one rpc miss and nothing unplayed", rep)
			}
		})
	}
}

// TestRawMessagesInOrder: a protocol playback does not know is played
// message by message, and a client message that differs is a miss.
func TestRawMessagesInOrder(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.Write(r.Context(), websocket.MessageText, []byte("hello"))
		for {
			_, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			c.Write(r.Context(), websocket.MessageText, append([]byte("got "), b...))
		}
	})
	drive := func(base string, second string) []string {
		c, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(base, "http")+"/chat", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		var got []string
		read := func() {
			_, b, err := c.Read(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(b))
		}
		read()
		c.Write(t.Context(), websocket.MessageText, []byte("one"))
		read()
		c.Write(t.Context(), websocket.MessageText, []byte(second))
		read()
		c.Close(websocket.StatusNormalClosure, "")
		return got
	}
	var recorded []string
	path := recordSession(t, echo, func(base string) { recorded = drive(base, "two") })
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	got := drive(srv.URL, "deux")
	if strings.Join(got, "|") != strings.Join(recorded, "|") {
		t.Errorf("played %q, want the recorded %q", got, recorded)
	}
	rep, _ := srv.Close(context.Background())
	if len(rep.Misses) != 1 || !strings.Contains(rep.Misses[0].Diff, "deux") {
		t.Errorf("misses %+v, want one naming the differing message", rep.Misses)
	}
}

// TestReconnectKeepsPlayed: a client that plays every recorded call and then
// connects again (a reload, a reconnect) has still played them; the report
// does not count them as never played because the last connection did not
// send them again.
func TestReconnectKeepsPlayed(t *testing.T) {
	recThread := t3.NewUUID()
	path := recordSession(t, effectServer(t, false), func(base string) {
		c := dialRPC(t, base, false)
		driveEffect(t, c, [3]string{`"1"`, `"2"`, `"3"`}, recThread, false)
		c.c.Close(websocket.StatusNormalClosure, "")
	})
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	c := dialRPC(t, srv.URL, false)
	thread := t3.NewUUID()
	driveEffect(t, c, [3]string{`1`, `2`, `3`}, thread, false)
	c.c.Close(websocket.StatusNormalClosure, "")

	again := dialRPC(t, srv.URL, false)
	again.send(`{"_tag":"Ping"}`)
	again.expect(effectrpc.TagPong, "")
	again.c.Close(websocket.StatusNormalClosure, "")
	// A third connection plays the calls again: each is repeated, not new.
	third := dialRPC(t, srv.URL, false)
	driveEffect(t, third, [3]string{`4`, `5`, `6`}, thread, false)
	third.c.Close(websocket.StatusNormalClosure, "")

	rep, err := srv.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Misses) != 0 || len(rep.Unplayed) != 0 {
		t.Errorf("report %+v: want no miss and nothing unplayed (every call was played on the first connection)", rep)
	}
	if rep.Played != 4 || rep.Repeated != 5 {
		t.Errorf("played %d, repeated %d; want 4 played (one connection, three calls) and 5 repeated (two reconnects, three calls again)", rep.Played, rep.Repeated)
	}
}

// TestUnplayedCallsHaveTheirSeqs: the recorded calls a client never made are
// listed each with the seq of the message that carried its request, not the
// connection's.
func TestUnplayedCallsHaveTheirSeqs(t *testing.T) {
	path := recordSession(t, effectServer(t, false), func(base string) {
		c := dialRPC(t, base, false)
		driveEffect(t, c, [3]string{`"1"`, `"2"`, `"3"`}, t3.NewUUID(), false)
		c.c.Close(websocket.StatusNormalClosure, "")
	})
	r, err := bundle.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for ev, err := range r.Events(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == bundle.KindWSMessage && ev.Dir == bundle.DirClientToServer && bytes.Contains(ev.Body.Data, []byte(`"_tag":"Request"`)) {
			want = append(want, ev.Seq)
		}
	}
	r.Close()
	if len(want) != 3 {
		t.Fatalf("the recording has %d requests, want 3", len(want))
	}
	srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	c := dialRPC(t, srv.URL, false)
	c.send(`{"_tag":"Ping"}`)
	c.expect(effectrpc.TagPong, "")
	c.c.Close(websocket.StatusNormalClosure, "")
	rep, err := srv.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, u := range rep.Unplayed {
		if u.Kind == "rpc" {
			got = append(got, u.Seq)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("never-played calls' seqs (-requests' events +report):\n%s\n%s", diff, rep.Summary())
	}
}

// TestServerMessagesFollowTheirCause: what the server sent on its own (no
// call's reply) is played after the client message recorded before it and
// not sooner, in recorded order, beside a call that is playing and with
// none, in every timing: a Ping sent after a message is answered before
// what the next message caused, and a call's reply that waits for the
// client's Ack is not overtaken.
func TestServerMessagesFollowTheirCause(t *testing.T) {
	server := wsServer(func(ctx context.Context, c *websocket.Conn) {
		c.Write(ctx, websocket.MessageText, []byte(`{"_tag":"Chunk","requestId":"0","values":["hello"]}`))
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m effectrpc.Message
			json.Unmarshal(b, &m)
			var out []string
			switch m.Tag {
			case effectrpc.TagPing:
				out = []string{`{"_tag":"Pong"}`}
			case effectrpc.TagRequest:
				out = []string{`{"_tag":"Chunk","requestId":"` + m.ID.Key() + `","values":["held"]}`}
			case effectrpc.TagAck:
				out = []string{`{"_tag":"Exit","requestId":"` + m.RequestID.Key() + `","exit":{"_tag":"Success","value":"released"}}`}
			case effectrpc.TagChunk:
				out = []string{string(b)}
				if bytes.Contains(b, []byte("twice")) {
					out = append(out, string(b))
				}
			}
			for _, o := range out {
				c.Write(ctx, websocket.MessageText, []byte(o))
			}
		}
	})
	chunk := func(id, v string) string { return `{"_tag":"Chunk","requestId":"` + id + `","values":["` + v + `"]}` }
	steps := []struct{ send, want []string }{
		{nil, []string{chunk("0", "hello")}},
		{[]string{chunk("1", "twice")}, []string{chunk("1", "twice"), chunk("1", "twice")}},
		{[]string{`{"_tag":"Ping"}`}, []string{`{"_tag":"Pong"}`}},
		{[]string{chunk("2", "b")}, []string{chunk("2", "b")}},
		{[]string{`{"_tag":"Request","id":"5","tag":"hold","payload":{},"headers":[]}`}, []string{chunk("5", "held")}},
		{[]string{chunk("3", "while held")}, []string{chunk("3", "while held")}},
		{[]string{`{"_tag":"Ack","requestId":"5"}`}, []string{`{"_tag":"Exit","requestId":"5","exit":{"_tag":"Success","value":"released"}}`}},
		{[]string{chunk("4", "after")}, []string{chunk("4", "after")}},
		{[]string{`{"_tag":"Ping"}`}, []string{`{"_tag":"Pong"}`}},
	}
	drive := func(t *testing.T, base string) {
		ctx := t.Context()
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/rpc", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		for i, st := range steps {
			for _, m := range st.send {
				if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
					t.Fatal(err)
				}
			}
			for _, want := range st.want {
				_, b, err := c.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != want {
					t.Fatalf("step %d: read %s, want %s", i, b, want)
				}
			}
		}
		c.Close(websocket.StatusNormalClosure, "")
	}
	path := recordSession(t, server, func(base string) { drive(t, base) })
	for _, timing := range []Timing{{Fast: true}, {Speed: 10}} {
		t.Run(timing.String(), func(t *testing.T) {
			srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: timing}})
			for range 3 { // a reconnection plays it again
				drive(t, srv.URL)
			}
			rep, _ := srv.Close(context.Background())
			if len(rep.Misses) != 0 || rep.Played != 2 || rep.Repeated != 4 {
				t.Errorf("report %+v: want the connection and its call played, each again twice, no miss", rep)
			}
		})
	}
}

// TestInterruptedStreamKeepsItsAcks: a server that sent a stream's next chunk
// after the client's Interrupt, because the client had acknowledged the
// chunk before it, is played back so to a client that interrupts without
// that Ack: the chunk is not sent (a live server would not send it), the
// interrupted Exit is. A client that acknowledges first gets the chunk, as
// recorded.
func TestInterruptedStreamKeepsItsAcks(t *testing.T) {
	// The server sends chunk 1, waits for the Ack and then for the
	// Interrupt, and only then sends chunk 2 and the interrupted Exit, so
	// the recording holds chunk 2 after the Interrupt, with one Ack before
	// it.
	server := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		read := func() effectrpc.Message {
			_, b, err := c.Read(ctx)
			if err != nil {
				return effectrpc.Message{}
			}
			var m effectrpc.Message
			json.Unmarshal(b, &m)
			return m
		}
		send := func(m effectrpc.Message) {
			b, _ := json.Marshal(m)
			c.Write(ctx, websocket.MessageText, b)
		}
		req := read()
		if req.Tag != effectrpc.TagRequest {
			return
		}
		send(effectrpc.Message{Tag: effectrpc.TagChunk, RequestID: req.ID, Values: json.RawMessage(`[{"n":1}]`)})
		if read().Tag != effectrpc.TagAck || read().Tag != effectrpc.TagInterrupt {
			return
		}
		send(effectrpc.Message{Tag: effectrpc.TagChunk, RequestID: req.ID, Values: json.RawMessage(`[{"n":2}]`)})
		send(effectrpc.Message{Tag: effectrpc.TagExit, RequestID: req.ID, Exit: &effectrpc.Exit{Tag: effectrpc.ExitFailure, Cause: json.RawMessage(`[{"_tag":"Interrupt","fiberId":41}]`)}})
		read()
	})
	path := recordSession(t, server, func(base string) {
		c := dialRPC(t, base, false)
		c.send(`{"_tag":"Request","id":"1","tag":"stream","payload":{},"headers":[]}`)
		c.expect(effectrpc.TagChunk, `"1"`)
		c.send(`{"_tag":"Ack","requestId":"1"}`)
		c.send(`{"_tag":"Interrupt","requestId":"1"}`)
		c.expect(effectrpc.TagChunk, `"1"`)
		c.expect(effectrpc.TagExit, `"1"`)
		c.c.Close(websocket.StatusNormalClosure, "")
	})
	for _, acked := range []bool{false, true} {
		t.Run(map[bool]string{false: "interrupted-unacked", true: "interrupted-acked"}[acked], func(t *testing.T) {
			srv := startPlayback(t, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
			c := dialRPC(t, srv.URL, false)
			c.send(`{"_tag":"Request","id":"5","tag":"stream","payload":{},"headers":[]}`)
			c.expect(effectrpc.TagChunk, `"5"`)
			if acked {
				c.send(`{"_tag":"Ack","requestId":"5"}`)
			}
			c.send(`{"_tag":"Interrupt","requestId":"5"}`)
			if acked {
				if m := c.expect(effectrpc.TagChunk, `"5"`); !bytes.Contains(m.Values, []byte(`"n":2`)) {
					t.Errorf("chunk %s, want the recorded second", m.Values)
				}
			}
			if m := c.expect(effectrpc.TagExit, `"5"`); m.Exit.Tag != effectrpc.ExitFailure {
				t.Errorf("exit %s, want the recorded interrupted Failure", m.Exit.Tag)
			}
			c.c.Close(websocket.StatusNormalClosure, "")
		})
	}
}
