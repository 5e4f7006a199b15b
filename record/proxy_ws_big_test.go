package record

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/internal/wsframe"
)

// TestProxyWebSocketBigBuffersGivenBack: a big message that is never
// completed gives its buffer back, whether the sender's connection ends
// inside it (the part relayed is recorded, incomplete, and the other side
// received exactly that part) or the client breaks the protocol inside it
// (not recorded past the break): once the connection is over, no big
// buffer of it is still mapped. The upstream's message is unmasked, so the
// relay reads most of it straight into the message's buffer (directRoom).
func TestProxyWebSocketBigBuffersGivenBack(t *testing.T) {
	bigFrame := func(p *rawPeer, op wsframe.Opcode, fin bool, size int) []byte {
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = 'a' + byte(i%26)
		}
		return p.frameBytes(rawFrame{op: op, fin: fin, payload: string(payload)})
	}
	for _, c := range []struct {
		name     string
		upstream bool                    // the upstream sends it, not the client
		send     func(p *rawPeer) []byte // what the sender sends before its connection ends
		kind     string                  // the event recorded for the unfinished message
		want     string                  // in its err
		header   int                     // the bytes of the frame header in send's bytes, if the message is recorded
	}{
		{"client's connection ends inside it", false, func(p *rawPeer) []byte {
			return bigFrame(p, wsframe.OpBinary, true, wsBig+4096)[:1<<20]
		}, "ws.message", "incomplete: the client's stream ended inside this message", 14},
		{"upstream's connection ends inside it", true, func(p *rawPeer) []byte {
			return bigFrame(p, wsframe.OpText, true, 2*wsBig)[:wsBig+wsBig/2]
		}, "ws.message", "incomplete: the upstream's stream ended inside this message", 10},
		{"protocol broken inside it", false, func(p *rawPeer) []byte {
			first := bigFrame(p, wsframe.OpText, false, wsBig)
			bad := wsframe.Append(nil, wsframe.Header{Fin: true, RSV2: true, Op: wsframe.OpContinuation, Length: 3, Masked: true})
			return append(append(first, bad...), "abc"...)
		}, "ws.error", "frame with reserved bits set", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			testkit.CheckLeaks(t)
			sent := make(chan []byte, 1)
			up := startRawUpstream(t, func(p *rawPeer) {
				if c.upstream {
					b := c.send(p)
					sent <- b
					p.conn.Write(b)
					return
				}
				io.Copy(io.Discard, p.br)
			})
			r := startRecording(t, up.URL, nil)
			maps0, mapped0 := bigMaps.Load(), bigMapped.Load()
			p := rawDial(t, r.URL, "/ws")
			var b []byte // what the sender sent
			if c.upstream {
				got, _ := io.ReadAll(p.br)
				if b = <-sent; !bytes.Equal(got, b) {
					t.Errorf("the client received %d bytes, want the %d the upstream sent", len(got), len(b))
				}
			} else {
				b = c.send(p)
				if _, err := p.conn.Write(b); err != nil {
					t.Fatal(err)
				}
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
			if c.header > 0 {
				want := bytes.Clone(b[c.header:])
				if h, _, err := wsframe.Parse(b); err == nil && h.Masked {
					wsframe.Mask(want, h.Mask, 0)
				}
				if !bytes.Equal(evs[0].Body.Data, want) {
					t.Errorf("recorded %d payload bytes, want the %d relayed", len(evs[0].Body.Data), len(want))
				}
			}
		})
	}
}

// TestProxyWebSocketBigBuffersAfterTheRecordingEnded: once the recording
// can no longer be written (closed here; a full disk is the same), the
// traffic still flows, and each big message's buffer is still given back
// and reused: before, every big message mapped a buffer of its own that
// was never unmapped, and the pages it wrote stayed resident.
func TestProxyWebSocketBigBuffersAfterTheRecordingEnded(t *testing.T) {
	testkit.CheckLeaks(t)
	const messages, size = 6, wsBig + 4096
	got := make(chan int64, 1)
	up := startRawUpstream(t, func(p *rawPeer) {
		n, _ := io.Copy(io.Discard, p.br)
		got <- n
	})
	r := startRecording(t, up.URL, nil)
	maps0, mapped0 := bigMaps.Load(), bigMapped.Load()
	p := rawDial(t, r.URL, "/ws")
	if err := r.rec.Close(); err != nil {
		t.Fatal(err)
	}
	payload := strings.Repeat("abcdefghijklmnopqrstuvwxyz", size/26+1)[:size]
	var sent int64
	for range messages {
		b := p.frameBytes(rawFrame{op: wsframe.OpText, fin: true, payload: payload})
		if _, err := p.conn.Write(b); err != nil {
			t.Fatal(err)
		}
		sent += int64(len(b))
	}
	p.conn.Close()
	if n := <-got; n != sent {
		t.Errorf("the upstream received %d bytes, want the %d sent", n, sent)
	}
	r.waitRelays()
	if n := bigMaps.Load() - maps0; n > bigSlots {
		t.Errorf("%d big buffers mapped for %d big messages, want at most one a slot (%d), reused", n, messages, bigSlots)
	}
	if n := bigMapped.Load() - mapped0; n != 0 {
		t.Errorf("%d big buffers still mapped after the connection ended", n)
	}
	r.stop()
}
