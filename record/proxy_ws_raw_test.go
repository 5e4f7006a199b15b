package record

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/wsframe"
)

// rawPeer speaks WebSocket frame by frame, for the peers coder/websocket will
// not play: a server that sends a message after the client's close frame, a
// client that sends one after the server's, a peer that drops or resets its
// connection, or sends what is not a frame.
type rawPeer struct {
	conn net.Conn
	br   *bufio.Reader
	mask bool // a client masks what it sends
}

type rawFrame struct {
	op      wsframe.Opcode
	fin     bool
	payload string
}

func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// startRawUpstream serves each WebSocket connection with handle, on a raw
// peer that has answered the handshake.
func startRawUpstream(t *testing.T, handle func(p *rawPeer)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			acceptKey(r.Header.Get("Sec-WebSocket-Key")))
		handle(&rawPeer{conn: conn, br: brw.Reader})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// rawDial opens a WebSocket connection to base+path with a raw client.
func rawDial(t *testing.T, base, path string) *rawPeer {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", path, u.Host, key)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != acceptKey(key) {
		t.Fatalf("handshake answered %s, accept %q", resp.Status, resp.Header.Get("Sec-WebSocket-Accept"))
	}
	return &rawPeer{conn: conn, br: br, mask: true}
}

// frameBytes encodes frames as p sends them (masked for a client).
func (p *rawPeer) frameBytes(frames ...rawFrame) []byte {
	var b []byte
	for _, f := range frames {
		h := wsframe.Header{Fin: f.fin, Op: f.op, Length: int64(len(f.payload)), Masked: p.mask}
		if p.mask {
			rand.Read(h.Mask[:])
		}
		b = wsframe.Append(b, h)
		n := len(b)
		b = append(b, f.payload...)
		if p.mask {
			wsframe.Mask(b[n:], h.Mask, 0)
		}
	}
	return b
}

// send writes frames in one write.
func (p *rawPeer) send(t *testing.T, frames ...rawFrame) {
	t.Helper()
	if _, err := p.conn.Write(p.frameBytes(frames...)); err != nil {
		t.Errorf("raw peer: writing %d frames: %v", len(frames), err)
	}
}

func text(s string) rawFrame { return rawFrame{op: wsframe.OpText, fin: true, payload: s} }

func closing(code int, reason string) rawFrame {
	return rawFrame{op: wsframe.OpClose, fin: true, payload: string(wsframe.AppendClose(nil, code, reason))}
}

// next reads one frame, unmasked.
func (p *rawPeer) next() (rawFrame, error) {
	head := make([]byte, 2, wsframe.MaxHeader)
	if _, err := io.ReadFull(p.br, head); err != nil {
		return rawFrame{}, err
	}
	n := 0
	switch head[1] & 0x7f {
	case 126:
		n = 2
	case 127:
		n = 8
	}
	if head[1]&0x80 != 0 {
		n += 4
	}
	head = head[:2+n]
	if _, err := io.ReadFull(p.br, head[2:]); err != nil {
		return rawFrame{}, err
	}
	h, _, err := wsframe.Parse(head)
	if err != nil {
		return rawFrame{}, err
	}
	payload := make([]byte, h.Length)
	if _, err := io.ReadFull(p.br, payload); err != nil {
		return rawFrame{}, err
	}
	if h.Masked {
		wsframe.Mask(payload, h.Mask, 0)
	}
	return rawFrame{op: h.Op, fin: h.Fin, payload: string(payload)}, nil
}

// describe shows a frame in test messages: "text hello", "close 4005 why".
func (f rawFrame) String() string {
	if f.op == wsframe.OpClose {
		code, reason, _ := wsframe.ParseClose([]byte(f.payload))
		return strings.TrimSpace(fmt.Sprintf("close %d %s", code, reason))
	}
	return f.op.String() + " " + f.payload
}

// frames reads frames until the connection ends and returns them, and how it
// ended.
func (p *rawPeer) frames() ([]string, error) {
	var out []string
	for {
		f, err := p.next()
		if err != nil {
			return out, err
		}
		out = append(out, f.String())
	}
}
