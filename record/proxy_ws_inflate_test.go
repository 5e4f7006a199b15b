package record

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// TestProxyInflatesLargeMessagesOneAtATime: compressed messages that
// inflate past inflateShared, sent on several connections at once, each
// wait for their turn (a few kilobytes of zeros inflate to megabytes: the
// connections' decompressions at once held a gigabyte), small ones do not,
// and every message is recorded whole, in its connection's order, with no
// connection stuck behind another's (the turns cannot deadlock).
func TestProxyInflatesLargeMessagesOneAtATime(t *testing.T) {
	testkit.CheckLeaks(t)
	up := startEchoUpstream(t, websocket.CompressionContextTakeover)
	r := startRecording(t, up.URL, nil)
	const conns, large = 4, 2
	big := make([]byte, 6<<20) // zeros: 6 MiB from a few kilobytes
	shares0 := inflateShares.Load()
	dialed := make([]*websocket.Conn, conns)
	for i := range dialed {
		dialed[i] = dialProxy(t, r, "/ws", &websocket.DialOptions{CompressionMode: websocket.CompressionContextTakeover})
	}
	echoClients(t, up, conns, func(i int) error {
		c := dialed[i]
		defer c.CloseNow()
		ctx := context.Background()
		for j := range large {
			for _, msg := range [][]byte{fmt.Appendf(nil, `{"conn":%d,"n":%d}`, i, j), big} {
				if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
					return err
				}
				if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, msg) {
					return fmt.Errorf("conn %d: echo of %d bytes: %d bytes, %v", i, len(msg), len(got), err)
				}
			}
		}
		return c.Close(websocket.StatusNormalClosure, "")
	})
	evs := r.stop()
	// Both ways: each large message was inflated twice, once per direction.
	if got, want := inflateShares.Load()-shares0, int64(conns*large*2); got != want {
		t.Errorf("%d decompressions took the shared slot, want %d (the large messages, both ways)", got, want)
	}
	got := map[string][]int{}
	for _, ev := range ofKinds(evs, "ws.message") {
		switch {
		case bytes.Equal(ev.Body.Data, big):
			got[ev.Conn+" "+string(ev.Dir)] = append(got[ev.Conn+" "+string(ev.Dir)], len(big))
		case len(ev.Body.Data) < 64:
			got[ev.Conn+" "+string(ev.Dir)] = append(got[ev.Conn+" "+string(ev.Dir)], 0)
		default:
			t.Fatalf("seq %d: %d bytes recorded, neither message (size %d, truncated %t, err %q)", ev.Seq, len(ev.Body.Data), ev.Size, ev.Truncated, ev.Err)
		}
	}
	want := map[string][]int{}
	for i := range conns {
		for _, dir := range []string{"c2s", "s2c"} {
			want[fmt.Sprintf("ws%d %s", i+1, dir)] = []int{0, len(big), 0, len(big)}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages recorded per connection and direction, 0 for the small one (-want +got):\n%s", diff)
	}
}

// TestInflateOrder: a ticket's turn comes once every ticket before it is
// done, in whatever order they finish, and the finished set does not grow.
func TestInflateOrder(t *testing.T) {
	o := newInflateOrder()
	w, err := bundle.Create(filepath.Join(t.TempDir(), "b.zst"), bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := New(w, nil)
	defer rec.Close()
	for want := range uint64(4) {
		res, ticket := o.reserve(rec)
		res.Cancel()
		if ticket != want {
			t.Fatalf("ticket %d, want %d", ticket, want)
		}
	}
	turned := make(chan struct{})
	go func() {
		o.wait(3)
		close(turned)
	}()
	o.done(2) // out of order: 0 and 1 are not done
	o.done(0)
	select {
	case <-turned:
		t.Fatal("ticket 3's turn came before ticket 1 was done")
	default:
	}
	o.done(1)
	<-turned
	o.done(3)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.low != 4 || len(o.finished) != 0 {
		t.Errorf("after every ticket is done: low %d, %d finished kept; want 4 and none", o.low, len(o.finished))
	}
}
