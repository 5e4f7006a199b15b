package record

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/internal/wsframe"
)

// TestProxyWebSocketInflatePastLimit: with context takeover, a compressed
// message that inflates past the recording limit is recorded cut and
// marked, and the messages after it in the same direction (which refer back
// to its window) are still decoded and redacted.
func TestProxyWebSocketInflatePastLimit(t *testing.T) {
	testkit.CheckLeaks(t)
	const secret = "infl-s3cret-9q8w7e"
	up := startEchoUpstream(t, websocket.CompressionContextTakeover)
	r := startRecordingWith(t, up.URL, &Options{Redact: []string{secret}}, ProxyOptions{MaxMessageSize: 64 << 10})
	c := dialProxy(t, r, "/ws", &websocket.DialOptions{CompressionMode: websocket.CompressionContextTakeover})
	huge := bytes.Repeat([]byte("abcdefgh"), 100<<10) // 800 KiB, a few KiB compressed
	echo(t, c, websocket.MessageText, huge)
	// Refers back to the huge message's window, then holds the secret.
	after := `{"pad":"` + strings.Repeat("abcdefgh", 64) + `","note":"` + secret + `"}`
	echo(t, c, websocket.MessageText, []byte(after))
	echo(t, c, websocket.MessageText, []byte(`{"note":"`+secret+` again"}`))
	c.Close(websocket.StatusNormalClosure, "")
	r.waitRelays()
	path := r.path
	evs := r.stop()
	var got []string
	for _, ev := range ofKinds(evs, "ws.message") {
		got = append(got, string(ev.Dir)+" "+summarise(ev))
	}
	wantAfter := strings.Replace(after, secret, "[REDACTED]", 1)
	want := []string{
		"c2s cut at 65536 of 819200", "s2c cut at 65536 of 819200",
		"c2s " + wantAfter, "s2c " + wantAfter,
		`c2s {"note":"[REDACTED] again"}`, `s2c {"note":"[REDACTED] again"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if raw := testkit.Decompress(t, path); bytes.Contains(raw, []byte(secret)) {
		t.Error("the secret is in the bundle")
	}
}

// summarise shows a recorded message: its text, or how it was cut, or its
// error.
func summarise(ev bundle.Event) string {
	switch {
	case ev.Err != "":
		return "error " + ev.Err
	case ev.Truncated:
		return fmt.Sprintf("cut at %d of %d", len(ev.Body.Data), ev.Size)
	}
	return string(ev.Body.Data)
}

// TestProxyWebSocketPartialMessage: a peer whose connection dies in the
// middle of a message has the payload bytes relayed of it recorded, marked
// incomplete, both ways.
func TestProxyWebSocketPartialMessage(t *testing.T) {
	testkit.CheckLeaks(t)
	const secret = "part-s3cret-1a2b3c"
	const payload = "client part " + secret
	clientSent := make(chan int, 1) // the bytes of the client's cut frame
	upGot := make(chan []byte, 1)
	up := startRawUpstream(t, func(p *rawPeer) {
		// Once the client's cut frame is in, the upstream sends 34 bytes of
		// a 100-byte message and its connection ends.
		b := make([]byte, <-clientSent)
		io.ReadFull(p.br, b)
		upGot <- b
		h := wsframe.Append(nil, wsframe.Header{Fin: true, Op: wsframe.OpText, Length: 100})
		p.conn.Write(append(h, "server half "+secret+"!!!!"...))
	})
	r := startRecording(t, up.URL, &Options{Redact: []string{secret}})
	c := rawDial(t, r.URL, "/ws")
	frame := c.frameBytes(rawFrame{op: wsframe.OpBinary, fin: true, payload: payload + strings.Repeat("x", 60)})
	cut := len(frame) - 60
	clientSent <- cut
	if _, err := c.conn.Write(frame[:cut]); err != nil {
		t.Fatal(err)
	}
	received, _ := io.ReadAll(c.br) // the upstream's 34 bytes, then the end
	c.conn.Close()
	if got := <-upGot; !bytes.Equal(got, frame[:cut]) {
		t.Errorf("the upstream received %q, want the client's cut frame", got)
	}
	r.waitRelays()
	evs := r.stop()
	if !bytes.Contains(received, []byte("server half "+secret)) {
		t.Fatalf("the client received %q", received)
	}
	var got []string
	for _, ev := range ofKinds(evs, "ws.message") {
		got = append(got, string(ev.Dir)+" "+string(ev.Body.Data)+" | "+string(ev.Attrs)+" | "+ev.Err)
	}
	want := []string{
		`s2c server half [REDACTED]!!!! | {"incomplete":true} | incomplete: the upstream's stream ended inside this message (EOF), after 34 of its payload bytes`,
	}
	if len(got) != 2 || got[0] != want[0] && got[1] != want[0] {
		t.Errorf("recorded messages:\n%s\nwant among them:\n%s", strings.Join(got, "\n"), want[0])
	}
	found := false
	for _, g := range got {
		found = found || strings.HasPrefix(g, "c2s client part [REDACTED] | {\"incomplete\":true} | incomplete: the client's stream ended inside this message")
	}
	if !found {
		t.Errorf("the client's cut message is not recorded as incomplete:\n%s", strings.Join(got, "\n"))
	}
	// The upstream's loss is the connection's end (docs/proxy.md): one
	// ws.close, the upstream's, and the client's message, cut when the
	// proxy dropped the client's connection for it, after that close.
	var ends []string
	for _, ev := range evs {
		if ev.Kind == bundle.KindWSClose || ev.Kind == bundle.KindWSMessage && ev.Dir == bundle.DirClientToServer {
			ends = append(ends, fmt.Sprintf("%s %s %d", ev.Kind, ev.Dir, ev.Code))
		}
	}
	if diff := cmp.Diff([]string{"ws.close s2c 1006", "ws.message c2s 0"}, ends); diff != "" {
		t.Errorf("the connection's end, in order (-want +got):\n%s", diff)
	}
}
