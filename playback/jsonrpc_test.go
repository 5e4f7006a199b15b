package playback

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/wireproof/wireproof/t3"
)

// tickAfter is how long after a subscribe the JSON-RPC server notifies.
const tickAfter = 150 * time.Millisecond

// jsonRPCServer answers "sum" and "subscribe" over a WebSocket; a subscribe
// is followed, tickAfter later, by a "tick" notification from the server.
// Notifications from the client get no answer.
func jsonRPCServer() http.Handler {
	return wsServer(func(ctx context.Context, c *websocket.Conn) {
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					A, B    int
					Session string `json:"sessionId"`
				} `json:"params"`
			}
			json.Unmarshal(data, &req)
			if req.ID == nil {
				continue
			}
			var result any
			switch req.Method {
			case "sum":
				result = map[string]any{"sum": req.Params.A + req.Params.B, "sessionId": req.Params.Session}
			case "subscribe":
				result = "subscribed"
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
			c.Write(ctx, websocket.MessageText, b)
			if req.Method == "subscribe" {
				time.Sleep(tickAfter)
				b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "tick", "params": map[string]any{"sessionId": req.Params.Session}})
				c.Write(ctx, websocket.MessageText, b)
			}
		}
	})
}

type jsonRPCReply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Params json.RawMessage `json:"params"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    Miss   `json:"data"`
	} `json:"error"`
}

// driveJSONRPC runs the client's side: a notification, a sum, a subscribe
// and its tick. It returns the sum's reply and how long the tick took after
// the subscribe's answer.
func driveJSONRPC(t *testing.T, base string, ids [2]string, session string) (sum jsonRPCReply, tickGap time.Duration, c *websocket.Conn) {
	t.Helper()
	ctx := t.Context()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/rpc", nil)
	if err != nil {
		t.Fatal(err)
	}
	send := func(s string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() jsonRPCReply {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var r jsonRPCReply
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("reply %s: %v", b, err)
		}
		return r
	}
	send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	send(`{"jsonrpc":"2.0","id":` + ids[0] + `,"method":"sum","params":{"a":1,"b":2,"sessionId":"` + session + `"}}`)
	sum = read()
	send(`{"jsonrpc":"2.0","id":` + ids[1] + `,"method":"subscribe","params":{"sessionId":"` + session + `"}}`)
	if r := read(); string(r.ID) != ids[1] || string(r.Result) != `"subscribed"` {
		t.Fatalf("subscribe answered %+v", r)
	}
	answered := time.Now()
	tick := read()
	tickGap = time.Since(answered)
	if tick.Method != "tick" || !strings.Contains(string(tick.Params), session) {
		t.Errorf("tick %+v: want a tick notification for session %s", tick, session)
	}
	return sum, tickGap, c
}

// TestJSONRPC plays a JSON-RPC 2.0 connection: requests answered under the
// client's ids with its session id, the server's own notification after the
// request that caused it with its recorded gap (as a ratio), and a miss
// answered with a JSON-RPC error naming the closest call.
func TestJSONRPC(t *testing.T) {
	recSession := t3.NewUUID()
	var recGap time.Duration
	path := recordSession(t, jsonRPCServer(), func(base string) {
		var c *websocket.Conn
		_, recGap, c = driveJSONRPC(t, base, [2]string{`1`, `2`}, recSession)
		c.Close(websocket.StatusNormalClosure, "")
	})
	// The gap to reproduce is the recorded one, between the subscribe's
	// answer and the tick as the proxy saw them.
	rec, err := Load(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	var answerT, tickT int64
	for _, f := range rec.Conns[0].Frames {
		switch {
		case bytes.Contains(f.Data, []byte(`"subscribed"`)):
			answerT = f.T
		case bytes.Contains(f.Data, []byte(`"tick"`)):
			tickT = f.T
		}
	}
	recGap = time.Duration(tickT - answerT)
	srv := startPlayback(t, path, nil) // recorded timing
	session := t3.NewUUID()
	sum, gap, c := driveJSONRPC(t, srv.URL, [2]string{`"a"`, `"b"`}, session)
	if string(sum.ID) != `"a"` || string(sum.Result) != `{"sessionId":"`+session+`","sum":3}` {
		t.Errorf("sum reply id %s result %s: want the client's id and session", sum.ID, sum.Result)
	}
	if ratio := float64(gap) / float64(recGap); ratio < 0.8 || ratio > 5 {
		t.Errorf("tick came %v after the subscribe's answer, recorded %v: ratio %.2f, want within [0.8, 5]", gap, recGap, ratio)
	}

	ctx := t.Context()
	c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":99,"method":"sum","params":{"a":5,"b":2,"sessionId":"`+session+`"}}`))
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var miss jsonRPCReply
	json.Unmarshal(b, &miss)
	if string(miss.ID) != "99" || miss.Error == nil || miss.Error.Code != -32601 || !strings.Contains(miss.Error.Message, "closest recorded") || !strings.Contains(miss.Error.Data.Diff, "5") {
		t.Errorf("miss reply %s: want a JSON-RPC error for id 99 naming the closest call and the differing a", b)
	}
	c.Close(websocket.StatusNormalClosure, "")
	rep, _ := srv.Close(context.Background())
	if len(rep.Misses) != 1 || len(rep.Unplayed) != 0 || rep.Played != 3 {
		t.Errorf("report %+v: want 3 played (the connection, two calls), one miss", rep)
	}
}
