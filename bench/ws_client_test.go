package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"

	"github.com/wireproof/wireproof/internal/wsframe"
)

// batchClient is a WebSocket client that writes its messages the way a busy
// client does: frames back to back, many per system call (up to batchBytes
// a write). Every endpoint in BenchmarkWSOneWay gets the same bytes in the
// same writes, so the figures compare what lies between the client and the
// sink and nothing else. (A client that writes one message per system call
// makes the sink wake for every message when it is reached directly, but
// not behind a relay that reads many at once: the relay then looked faster
// than no relay at all.)
type batchClient struct {
	conn net.Conn
	br   *bufio.Reader
	buf  []byte
}

const batchBytes = 32 << 10

// dialBatch opens a WebSocket connection to base+path by hand.
func dialBatch(b *testing.B, base, path string) *batchClient {
	b.Helper()
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path, u.Host)
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		b.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		b.Fatalf("handshake: %s", res.Status)
	}
	return &batchClient{conn: conn, br: br, buf: make([]byte, 0, batchBytes+64<<10)}
}

// send queues a masked text message and writes the queue once it is
// batchBytes or more.
func (c *batchClient) send(b *testing.B, msg []byte) {
	h := wsframe.Header{Fin: true, Op: wsframe.OpText, Length: int64(len(msg)), Masked: true, Mask: [4]byte{1, 2, 3, 4}}
	c.buf = wsframe.Append(c.buf, h)
	n := len(c.buf)
	c.buf = append(c.buf, msg...)
	wsframe.Mask(c.buf[n:], h.Mask, 0)
	if len(c.buf) >= batchBytes {
		c.flush(b)
	}
}

func (c *batchClient) flush(b *testing.B) {
	if len(c.buf) == 0 {
		return
	}
	if _, err := c.conn.Write(c.buf); err != nil {
		b.Fatal(err)
	}
	c.buf = c.buf[:0]
}

// read reads the next message the server sends (unmasked, one frame).
func (c *batchClient) read(b *testing.B) []byte {
	var hdr [wsframe.MaxHeader]byte
	if _, err := io.ReadFull(c.br, hdr[:2]); err != nil {
		b.Fatal(err)
	}
	n := 2
	for {
		h, used, err := wsframe.Parse(hdr[:n])
		if errors.Is(err, wsframe.ErrShort) {
			if _, err := io.ReadFull(c.br, hdr[n:n+1]); err != nil {
				b.Fatal(err)
			}
			n++
			continue
		}
		if err != nil {
			b.Fatal(err)
		}
		_ = used
		p := make([]byte, h.Length)
		if _, err := io.ReadFull(c.br, p); err != nil {
			b.Fatal(err)
		}
		return p
	}
}
