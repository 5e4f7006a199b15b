package record

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/redact"
)

// TestProxyWebSocketInlineRecording sends a burst of messages of many sizes
// (many small ones per read, some past the arena's pieces, some in several
// frames, a big one recorded on its own goroutine while the small ones after
// it are recorded on the relay's) and checks that the bundle holds every
// message of both directions, byte for byte, in the order sent, with the
// secret in some of them redacted. Small messages are recorded on the relay's
// goroutine and, with no subscriber, their buffers and events are reused for
// the next: with a subscriber they must not be, and what it was handed must
// be what the bundle holds.
func TestProxyWebSocketInlineRecording(t *testing.T) {
	const secret = "sk-inline-7c1d9e"
	for _, subscribe := range []bool{false, true} {
		t.Run(fmt.Sprintf("subscriber=%t", subscribe), func(t *testing.T) {
			testkit.CheckLeaks(t)
			up := startEchoUpstream(t, websocket.CompressionDisabled)
			r := startRecording(t, up.URL, &Options{Redact: []string{secret}})
			var mu sync.Mutex
			var seen []bundle.Event
			if subscribe {
				r.rec.Subscribe("collect", SubscriberFunc(func(ev *bundle.Event) error {
					if ev.Kind == bundle.KindWSMessage {
						mu.Lock()
						defer mu.Unlock()
						// Kept, not copied (a subscriber may keep what it
						// only reads): a buffer the relay reused would show.
						seen = append(seen, bundle.Event{Dir: ev.Dir, Body: ev.Body})
					}
					return nil
				}))
			}
			var msgs [][]byte
			for i := range 600 {
				size := []int{5, 200, 1000, 4095, 4096, 4097, 9000, 70000}[i%8]
				if i == 300 {
					size = 5 << 20 // big: past wsBig
				}
				m := []byte(fmt.Sprintf(`{"n":%d,"pad":"`, i))
				for len(m) < size-2 {
					m = append(m, byte('a'+(len(m)+i)%26))
				}
				if i%7 == 0 {
					m = append(m[:len(m)/2], secret...)
				}
				msgs = append(msgs, append(m, `"}`...))
			}
			c := dialProxy(t, r, "/ws", nil)
			ctx := context.Background()
			read := make(chan error, 1)
			go func() {
				for i, want := range msgs {
					_, got, err := c.Read(ctx)
					if err != nil || !bytes.Equal(got, want) {
						read <- fmt.Errorf("echo %d: %d bytes, want %d (%v)", i, len(got), len(want), err)
						return
					}
				}
				read <- nil
			}()
			for i, m := range msgs {
				if i%5 == 4 {
					// Several frames: a writer flushed part way.
					w, err := c.Writer(ctx, websocket.MessageText)
					if err != nil {
						t.Fatal(err)
					}
					half := len(m) / 2
					w.Write(m[:half])
					w.Write(m[half:])
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := c.Write(ctx, websocket.MessageText, m); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-read; err != nil {
				t.Fatal(err)
			}
			c.Close(websocket.StatusNormalClosure, "")
			<-up.closes
			evs := ofKinds(r.stop(), "ws.message")
			redacted := func(m []byte) []byte {
				return bytes.ReplaceAll(m, []byte(secret), []byte(redact.Redacted))
			}
			for _, dir := range []bundle.Dir{bundle.DirClientToServer, bundle.DirServerToClient} {
				var got [][]byte
				for _, ev := range evs {
					if ev.Dir == dir {
						got = append(got, ev.Body.Data)
					}
				}
				if len(got) != len(msgs) {
					t.Fatalf("%s: %d messages recorded, want %d", dir, len(got), len(msgs))
				}
				for i, m := range msgs {
					if want := redacted(m); !bytes.Equal(got[i], want) {
						t.Fatalf("%s message %d: recorded %d bytes %.60q..., want %d bytes %.60q...", dir, i, len(got[i]), got[i], len(want), want)
					}
				}
			}
			if subscribe {
				mu.Lock()
				defer mu.Unlock()
				if len(seen) != len(evs) {
					t.Fatalf("the subscriber saw %d messages, the bundle holds %d", len(seen), len(evs))
				}
				for i := range evs {
					if seen[i].Dir != evs[i].Dir || !bytes.Equal(seen[i].Body.Data, evs[i].Body.Data) {
						t.Fatalf("message %d: the subscriber saw %d bytes %s, the bundle holds %d bytes %s", i, len(seen[i].Body.Data), seen[i].Dir, len(evs[i].Body.Data), evs[i].Dir)
					}
				}
			}
			if raw := testkit.Decompress(t, r.path); strings.Contains(string(raw), secret) {
				t.Error("the secret is in the bundle")
			}
		})
	}
}
