package record

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/httphop"
	"github.com/wireproof/wireproof/internal/wsframe"
)

// wsCloseWait bounds how long a side may take to end its TCP connection once
// the other side has ended its own after the close handshake, and how long
// the proxy waits for both sides to answer its own close when it stops.
const wsCloseWait = 5 * time.Second

// stopReason is the close reason both sides get when the proxy stops.
const stopReason = "wireproof: recording stopped"

// wsRelay is one proxied WebSocket connection. It relays bytes, not
// messages: each direction reads whatever its source sent, parses the frame
// headers in it to find the messages and control frames to record, and
// writes the same bytes on at once. So the proxy never answers for a peer
// (pings, pongs and close frames go through as the peers sent them, payloads
// and codes included), a closing side's peer can go on sending until its own
// close frame, and an idle connection pays one read and one write per
// message while a busy one passes many messages per system call.
//
// Every event takes its place in the recording's order before the relay
// passes its bytes on, so a reply can never be recorded before what caused
// it. A small uncompressed message is redacted, encoded and handed to the
// bundle writer right there, on the relay's goroutine (cheaper than a
// wake-up of another goroutine per message; see wsStream.recordMessage); a
// big or compressed one, and the control frames, are recorded by a
// goroutine of the connection, in the place the relay took (see wsQueue).
type wsRelay struct {
	p       *Proxy
	id      string
	client  *wsPeer
	up      *wsPeer
	deflate bool // permessage-deflate was negotiated
	q       *wsQueue

	mu       sync.Mutex
	dropped  bool // the proxy dropped both connections: later errors are its own doing
	stopping bool // the proxy is closing: each direction sends its peer a 1001 close
}

// wsPeer is one end of a relayed connection.
type wsPeer struct {
	name  string     // "client" or "upstream"
	dir   bundle.Dir // the direction of what it sends
	conn  net.Conn
	r     io.Reader // buffered: bytes read with the handshake come first
	masks bool      // it is the server: frames written to it are masked

	// Guarded by wsRelay.mu.
	closed bool // its close frame crossed the proxy
	ended  bool // how it ended is recorded
}

func (p *Proxy) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if p.isClosed() {
		http.Error(w, "wireproof: the recording proxy is closed", http.StatusServiceUnavailable)
		return
	}
	uc, err := p.dialUpstream(r.Context(), r)
	if err != nil {
		p.refuseUpgrade(w, r, nil, err)
		return
	}
	if uc.resp.StatusCode != http.StatusSwitchingProtocols {
		p.refuseUpgrade(w, r, uc.resp, fmt.Errorf("expected handshake response status code 101 but got %d", uc.resp.StatusCode))
		uc.conn.Close()
		return
	}
	id := p.prefix + "ws" + strconv.FormatUint(p.wsIDs.Add(1), 10)
	ext := uc.resp.Header.Get("Sec-WebSocket-Extensions")
	deflate := httphop.HasToken(uc.resp.Header, "Sec-WebSocket-Extensions", "permessage-deflate")
	attrs := fmt.Appendf(nil, `{"clientCompressed":%t,"upstreamCompressed":%t`, deflate, deflate)
	if ext != "" {
		attrs = fmt.Appendf(attrs, `,"extensions":%q`, ext)
	}
	attrs = append(attrs, '}')
	cconn, cr, herr := hijackClient(w, uc.resp)
	_, _ = p.rec.Emit(&bundle.Event{Kind: bundle.KindWSOpen, Conn: id, URL: r.URL.RequestURI(), Header: r.Header.Clone(),
		Name: uc.resp.Header.Get("Sec-WebSocket-Protocol"), Attrs: attrs})
	if herr != nil {
		_, _ = p.rec.Emit(&bundle.Event{Kind: bundle.KindWSClose, Conn: id, Dir: bundle.DirClientToServer, Code: wsAbnormal, Err: "taking the client's connection over: " + herr.Error()})
		uc.conn.Close()
		return
	}
	rl := &wsRelay{
		p:       p,
		id:      id,
		client:  &wsPeer{name: "client", dir: bundle.DirClientToServer, conn: cconn, r: cr},
		up:      &wsPeer{name: "upstream", dir: bundle.DirServerToClient, conn: uc.conn, r: uc.br, masks: true},
		deflate: deflate,
	}
	rl.q = newWSQueue(rl, uc.resp.Header)
	if !p.track(rl) {
		rl.shutdown()
	} else {
		defer p.untrack(rl)
	}
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		rl.q.run()
	}()
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		rl.pump(rl.client, rl.up)
	}()
	rl.pump(rl.up, rl.client)
	<-pumped
	cconn.Close()
	uc.conn.Close()
	rl.q.close()
	<-recorded
	rl.q.release()
}

// wsAbnormal is the code recorded for a side whose stream ended without a
// close frame (1006, never sent on the wire).
const wsAbnormal = 1006

// refuseUpgrade relays an upstream's refusal of the upgrade (a spent ticket
// gets 401, say) to the client, and records it as an HTTP exchange. resp is
// nil when the upstream could not be reached.
func (p *Proxy) refuseUpgrade(w http.ResponseWriter, r *http.Request, resp *http.Response, err error) {
	ex := &httpExchange{p: p, id: p.prefix + "h" + strconv.FormatUint(p.httpIDs.Add(1), 10)}
	ex.emit(&bundle.Event{Kind: bundle.KindHTTPRequest, Conn: ex.id, Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone()})
	if resp == nil {
		ex.end(0, fmt.Errorf("websocket upgrade: %w", err))
		http.Error(w, "wireproof: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	ex.emit(&bundle.Event{Kind: bundle.KindHTTPResponse, Conn: ex.id, Status: resp.StatusCode, Header: resp.Header.Clone()})
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(resp.Body)
	}
	ex.body(bundle.DirServerToClient, body, true)
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = append([]string(nil), vs...)
	}
	httphop.Remove(h)
	h.Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	n, _ := w.Write(body)
	ex.end(int64(n), fmt.Errorf("websocket upgrade: %w", err))
}

// pump relays what src sends to dst until src's stream ends.
func (rl *wsRelay) pump(src, dst *wsPeer) {
	st := newWSStream(rl, src)
	defer st.abandon()
	buf := make([]byte, 32<<10)
	for {
		b := buf
		direct := st.directRoom()
		if direct > 0 {
			b = st.msg[len(st.msg) : len(st.msg)+direct]
		}
		n, err := src.r.Read(b)
		if rl.isStopping() {
			rl.stop(src, dst, st)
			return
		}
		if n > 0 {
			if direct > 0 {
				st.readInto(n)
			} else {
				st.feed(b[:n])
			}
			if _, werr := dst.conn.Write(b[:n]); werr != nil {
				rl.writeFailed(src, dst, werr)
				return
			}
		}
		if err != nil {
			st.incomplete(describeEnd(err))
			rl.readEnded(src, dst, err)
			return
		}
	}
}

func (rl *wsRelay) isStopping() bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.stopping
}

// record takes the next place in the recording for ev, which the
// connection's recording goroutine fills. held is the number of bytes ev
// holds (its body), for the queue's bound; inflate says its body is a
// permessage-deflate compressed message.
func (rl *wsRelay) record(ev *bundle.Event, held int64, inflate bool) {
	rl.q.push(rl.item(ev, held, inflate))
}

// item takes the next place in the recording for ev, and with inflate a
// ticket for its decompression's turn (inflateOrder).
func (rl *wsRelay) item(ev *bundle.Event, held int64, inflate bool) wsItem {
	if !inflate {
		return wsItem{res: rl.p.rec.Reserve(), ev: ev, held: held}
	}
	res, ticket := rl.p.inflates.reserve(rl.p.rec)
	return wsItem{res: res, ev: ev, held: held, inflate: true, ticket: ticket}
}

// closeFrame records the close frame side sent; it is relayed like any other
// frame.
func (rl *wsRelay) closeFrame(side *wsPeer, code int, reason string, err error) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if side.ended {
		return
	}
	side.closed, side.ended = true, true
	ev := &bundle.Event{Kind: bundle.KindWSClose, Conn: rl.id, Dir: side.dir, Code: code, Reason: reason}
	if err != nil {
		ev.Err = "invalid close frame: " + err.Error()
	}
	rl.record(ev, 0, false)
}

// endAbnormally records that side's stream ended without a close frame, once.
// rl.mu is held.
func (rl *wsRelay) endAbnormally(side *wsPeer, why string) {
	if side.ended {
		return
	}
	side.ended = true
	rl.record(&bundle.Event{Kind: bundle.KindWSClose, Conn: rl.id, Dir: side.dir, Code: wsAbnormal, Err: why}, 0, false)
}

// readEnded handles the end of src's stream. After src's close frame it is
// the close handshake's end: dst reads EOF too and has wsCloseWait to close
// its side. Without one the connection was lost: that is recorded, and dst's
// connection is dropped the way src's was (FIN or reset), which is what dst
// would have seen without the proxy.
func (rl *wsRelay) readEnded(src, dst *wsPeer, err error) {
	rl.mu.Lock()
	if rl.dropped {
		rl.mu.Unlock()
		return
	}
	if src.closed {
		rl.mu.Unlock()
		closeWrite(dst.conn)
		dst.conn.SetReadDeadline(time.Now().Add(wsCloseWait))
		return
	}
	why := describeEnd(err)
	if isTimeout(err) {
		why = fmt.Sprintf("no close frame within %v of the %s's end", wsCloseWait, dst.name)
	}
	rl.endAbnormally(src, why)
	rl.dropped = true
	rl.mu.Unlock()
	drop(dst.conn, isReset(err))
	drop(src.conn, false)
}

// writeFailed handles a write to dst that failed: dst is gone. Unless it had
// said goodbye with a close frame, that is recorded as its abnormal end. Both
// connections are dropped.
func (rl *wsRelay) writeFailed(src, dst *wsPeer, err error) {
	rl.mu.Lock()
	if rl.dropped {
		rl.mu.Unlock()
		return
	}
	rl.endAbnormally(dst, "writing to the "+dst.name+": "+describeEnd(err))
	rl.dropped = true
	rl.mu.Unlock()
	drop(src.conn, false)
	drop(dst.conn, false)
}

// shutdown ends the connection because the proxy is closing: unless both
// sides have already closed, it records one ws.close (no direction, 1001),
// and it wakes both directions, which send their peers a 1001 close frame
// and wait for the peers' answers (see stop).
func (rl *wsRelay) shutdown() {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.dropped || rl.stopping {
		return
	}
	rl.stopping = true
	if !rl.client.ended || !rl.up.ended {
		rl.record(&bundle.Event{Kind: bundle.KindWSClose, Conn: rl.id, Code: 1001, Reason: stopReason}, 0, false)
	}
	// Set under rl.mu, so a direction that sees stopping has this deadline
	// behind it and sets its own.
	rl.client.conn.SetReadDeadline(time.Unix(1, 0))
	rl.up.conn.SetReadDeadline(time.Unix(1, 0))
}

// stop sends dst a 1001 close frame, unless src's own close frame already
// went to it (if what was relayed to dst does not end at a frame boundary,
// dst's connection is just closed), and reads what src still sends,
// unrelayed and unrecorded, until src closes its connection or wsCloseWait
// passes.
func (rl *wsRelay) stop(src, dst *wsPeer, st *wsStream) {
	rl.mu.Lock()
	sendClose := !src.closed
	src.conn.SetReadDeadline(time.Now().Add(wsCloseWait))
	rl.mu.Unlock()
	switch {
	case sendClose && st.atBoundary():
		dst.conn.SetWriteDeadline(time.Now().Add(wsCloseWait))
		if _, err := dst.conn.Write(closeFrame(1001, stopReason, dst.masks)); err == nil {
			closeWrite(dst.conn)
		}
	case sendClose:
		dst.conn.Close()
	default:
		closeWrite(dst.conn)
	}
	io.Copy(io.Discard, src.r)
}

// closeFrame returns a close frame with code and reason, masked with a random
// key if masked.
func closeFrame(code int, reason string, masked bool) []byte {
	payload := wsframe.AppendClose(nil, code, reason)
	h := wsframe.Header{Fin: true, Op: wsframe.OpClose, Length: int64(len(payload)), Masked: masked}
	if masked {
		k := rand.Uint32()
		h.Mask = [4]byte{byte(k), byte(k >> 8), byte(k >> 16), byte(k >> 24)}
		wsframe.Mask(payload, h.Mask, 0)
	}
	return append(wsframe.Append(nil, h), payload...)
}
