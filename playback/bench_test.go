package playback

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/wireproof/wireproof/protocol/effectrpc"
)

// callsPerSession is the number of Effect RPC calls of one benchmark session.
const callsPerSession = 200

// callServer answers every Effect RPC Request with an Exit whose value is
// the request's payload.
func callServer() http.Handler {
	return wsServer(func(ctx context.Context, c *websocket.Conn) {
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m effectrpc.Message
			if json.Unmarshal(b, &m) != nil || m.Tag != effectrpc.TagRequest {
				continue
			}
			out, _ := json.Marshal(effectrpc.Message{Tag: effectrpc.TagExit, RequestID: m.ID, Exit: &effectrpc.Exit{Tag: effectrpc.ExitSuccess, Value: m.Payload}})
			if c.Write(ctx, websocket.MessageText, out) != nil {
				return
			}
		}
	})
}

// callSession makes callsPerSession calls of about 1 KiB, one at a time,
// each answered before the next.
func callSession(tb testing.TB, base string) {
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/rpc", nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.CloseNow()
	text := strings.Repeat("lorem ipsum dolor sit amet ", 36)
	for i := range callsPerSession {
		req := fmt.Sprintf(`{"_tag":"Request","id":"%d","tag":"thread.append","payload":{"threadId":"thr-%d","sequence":%d,"text":%q},"headers":[]}`, i, i%7, i, text)
		if err := c.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			tb.Fatal(err)
		}
		_, b, err := c.Read(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		if !strings.Contains(string(b), `"Exit"`) || !strings.Contains(string(b), fmt.Sprintf(`"sequence":%d`, i)) {
			tb.Fatalf("call %d answered %.200s", i, b)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// BenchmarkEffectCalls plays a recorded Effect RPC session of calls (each
// client Request matched among the recorded ones, its Exit sent under the
// client's request id) with fast timing: one op is one session.
func BenchmarkEffectCalls(b *testing.B) {
	path := recordSession(b, callServer(), func(base string) { callSession(b, base) })
	srv := startPlayback(b, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
	b.ReportAllocs()
	for b.Loop() {
		callSession(b, srv.URL)
	}
	b.StopTimer()
	if rep := srv.Player.Report(); len(rep.Misses) != 0 {
		b.Fatalf("playback missed: %s", rep.Summary())
	}
}
