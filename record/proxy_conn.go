package record

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/wireproof/wireproof/internal/httphop"
)

// handshakeTimeout bounds the upstream's answer to a WebSocket upgrade.
const handshakeTimeout = 30 * time.Second

// wsPassedExtensions are the WebSocket extensions a client may negotiate
// through the proxy: the ones whose frames it can decode to record them.
var wsPassedExtensions = []string{"permessage-deflate"}

// upstreamConn is an upstream connection on which the client's upgrade
// request was sent, and the upstream's answer.
type upstreamConn struct {
	conn net.Conn
	br   *bufio.Reader // the answer was read through it; frames follow
	resp *http.Response
}

// dialUpstream connects to the upstream and sends it the client's upgrade
// request as the client sent it (its Sec-WebSocket-Key and -Version, its
// subprotocols, and those of its extension offers the proxy can decode), so
// that the upstream's answer, Sec-WebSocket-Accept included, is valid for the
// client as it is and the two ends negotiate with each other, not with the
// proxy. The handshake is done by hand rather than with a WebSocket library:
// the proxy relays frames, it does not terminate the connection.
func (p *Proxy) dialUpstream(ctx context.Context, r *http.Request) (*upstreamConn, error) {
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	target := p.target(r)
	addr := target.Host
	if target.Port() == "" {
		port := "80"
		if target.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(target.Hostname(), port)
	}
	dial := (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	var tlsConf *tls.Config
	if ht, ok := p.transport.(*http.Transport); ok {
		if ht.DialContext != nil {
			dial = ht.DialContext
		}
		if ht.TLSClientConfig != nil {
			tlsConf = ht.TLSClientConfig.Clone()
		}
	}
	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*upstreamConn, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, err
	}
	if target.Scheme == "https" {
		if tlsConf == nil {
			tlsConf = &tls.Config{}
		}
		if tlsConf.ServerName == "" {
			tlsConf.ServerName = target.Hostname()
		}
		tlsConf.NextProtos = []string{"http/1.1"} // an upgrade is HTTP/1.1 only
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail(err)
		}
		conn = tc
	}
	req := &http.Request{
		Method:     http.MethodGet,
		URL:        &url.URL{Path: target.Path, RawPath: target.RawPath, RawQuery: target.RawQuery},
		Host:       target.Host,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     upgradeHeader(r.Header),
	}
	bw := bufio.NewWriter(conn)
	if err := req.Write(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fail(err)
	}
	if !stop() {
		resp.Body.Close()
		return fail(errors.New("the upgrade timed out"))
	}
	conn.SetDeadline(time.Time{})
	return &upstreamConn{conn: conn, br: br, resp: resp}, nil
}

// upgradeHeader is the header of the upgrade request sent upstream: the
// client's, without its hop-by-hop fields and extension offers the proxy
// could not decode.
func upgradeHeader(in http.Header) http.Header {
	h := in.Clone()
	httphop.Remove(h)
	h.Del("Host")
	h.Set("Connection", "Upgrade")
	h.Set("Upgrade", "websocket")
	var offers []string
	for _, v := range in.Values("Sec-WebSocket-Extensions") {
		for _, ext := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(ext, ";")
			for _, ok := range wsPassedExtensions {
				if strings.EqualFold(strings.TrimSpace(name), ok) {
					offers = append(offers, strings.TrimSpace(ext))
				}
			}
		}
	}
	h.Del("Sec-WebSocket-Extensions")
	if len(offers) > 0 {
		h.Set("Sec-WebSocket-Extensions", strings.Join(offers, ", "))
	}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""} // send none, as the client did
	}
	return h
}

// hijackClient takes the client's connection over and answers its upgrade
// with the upstream's 101 response, headers as they came.
func hijackClient(w http.ResponseWriter, resp *http.Response) (net.Conn, *bufio.Reader, error) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %s\r\n", resp.Status)
	resp.Header.Write(&b)
	b.WriteString("\r\n")
	if _, err := conn.Write(b.Bytes()); err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, brw.Reader, nil
}

// closeWrite passes an orderly end of stream on: the peer reads EOF but may
// still send.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// drop closes c; with reset, it sends a TCP reset rather than an orderly
// end, as the side that reset the other connection did.
func drop(c net.Conn, reset bool) {
	if reset {
		if tc := tcpConn(c); tc != nil {
			tc.SetLinger(0)
		}
	}
	c.Close()
}

func tcpConn(c net.Conn) *net.TCPConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tc, _ := c.(*net.TCPConn)
	return tc
}

// isReset reports whether a read ended because the peer reset the connection.
func isReset(err error) bool {
	return errors.Is(err, errConnReset)
}

// isTimeout reports whether a read ended at its deadline.
func isTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// describeEnd says how a stream ended without a close frame, for ws.close's
// err: "EOF" when the TCP connection was closed in order.
func describeEnd(err error) string {
	switch {
	case errors.Is(err, io.EOF):
		return "EOF"
	case isReset(err):
		return "connection reset by peer"
	}
	return err.Error()
}
