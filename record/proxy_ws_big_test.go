package record

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/internal/wsframe"
)

// TestProxyWebSocketBigBuffersGivenBack: a big message that is never
// completed gives its buffer back, whether the client's connection ends
// inside it (the part relayed is recorded, incomplete) or the client breaks
// the protocol inside it (not recorded past the break): once the connection
// is over, no big buffer of it is still mapped.
func TestProxyWebSocketBigBuffersGivenBack(t *testing.T) {
	for _, c := range []struct {
		name string
		send func(p *rawPeer) []byte // what the client sends before its connection ends
		kind string                  // the event recorded for the unfinished message
		want string                  // in its err
	}{
		{"connection ends inside it", func(p *rawPeer) []byte {
			frame := p.frameBytes(rawFrame{op: wsframe.OpBinary, fin: true, payload: strings.Repeat("b", wsBig+4096)})
			return frame[:1<<20]
		}, "ws.message", "incomplete: the client's stream ended inside this message"},
		{"protocol broken inside it", func(p *rawPeer) []byte {
			first := p.frameBytes(rawFrame{op: wsframe.OpText, payload: strings.Repeat("t", wsBig)})
			bad := wsframe.Append(nil, wsframe.Header{Fin: true, RSV2: true, Op: wsframe.OpContinuation, Length: 3, Masked: true})
			return append(append(first, bad...), "abc"...)
		}, "ws.error", "frame with reserved bits set"},
	} {
		t.Run(c.name, func(t *testing.T) {
			testkit.CheckLeaks(t)
			up := startRawUpstream(t, func(p *rawPeer) { io.Copy(io.Discard, p.br) })
			r := startRecording(t, up.URL, nil)
			maps0, mapped0 := bigMaps.Load(), bigMapped.Load()
			p := rawDial(t, r.URL, "/ws")
			if _, err := p.conn.Write(c.send(p)); err != nil {
				t.Fatal(err)
			}
			p.conn.Close()
			r.waitRelays()
			if n := bigMaps.Load() - maps0; n > 1 || (runtime.GOOS == "linux" && !r.rec.Retains() && n != 1) {
				t.Errorf("%d big buffers mapped for the connection, want 1", n)
			}
			if n := bigMapped.Load() - mapped0; n != 0 {
				t.Errorf("%d big buffers still mapped after the connection ended", n)
			}
			evs := ofKinds(r.stop(), c.kind)
			if len(evs) != 1 || !strings.Contains(evs[0].Err, c.want) {
				t.Fatalf("recorded %s events %+v, want one whose err says %q", c.kind, evs, c.want)
			}
		})
	}
}
