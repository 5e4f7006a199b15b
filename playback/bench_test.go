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
	"github.com/wireproof/wireproof/t3"
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
// each answered before the next, on the threads named.
func callSession(tb testing.TB, base string, threads []string) {
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/rpc", nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.CloseNow()
	text, _ := json.Marshal(strings.Repeat("lorem ipsum dolor sit amet ", 36))
	for i := range callsPerSession {
		req := fmt.Appendf(nil, `{"_tag":"Request","id":"%d","tag":"thread.append","payload":{"threadId":"%s","sequence":%d,"text":%s},"headers":[]}`, i, threads[i%len(threads)], i, text)
		if err := c.Write(ctx, websocket.MessageText, req); err != nil {
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
// client's request id) with fast timing: one op is one session. In
// "same-ids" the client names the recorded threads; in "learned-ids" its
// own (UUIDs), which playback learns and puts in every reply.
func BenchmarkEffectCalls(b *testing.B) {
	threads := func() []string {
		var ts []string
		for range 7 {
			ts = append(ts, t3.NewUUID())
		}
		return ts
	}
	recorded := threads()
	path := recordSession(b, callServer(), func(base string) { callSession(b, base, recorded) })
	for _, bc := range []struct {
		name    string
		threads []string
	}{{"same-ids", recorded}, {"learned-ids", threads()}} {
		b.Run(bc.name, func(b *testing.B) {
			srv := startPlayback(b, path, &ServeOptions{Options: Options{Timing: Timing{Fast: true}}})
			b.ReportAllocs()
			for b.Loop() {
				callSession(b, srv.URL, bc.threads)
			}
			b.StopTimer()
			if rep := srv.Player.Report(); len(rep.Misses) != 0 {
				b.Fatalf("playback missed: %s", rep.Summary())
			}
			if got := len(srv.Player.IDs()); bc.name == "learned-ids" && got != len(bc.threads) {
				b.Fatalf("learned %d ids, want the %d threads", got, len(bc.threads))
			}
		})
	}
}
