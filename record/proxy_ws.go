package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"github.com/wireproof/wireproof/bundle"
)

// wsHandshakeHeaders are negotiated by each side's own handshake and are not
// copied from the client's upgrade request to the upstream's.
var wsHandshakeHeaders = []string{
	"Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions",
	"Sec-Websocket-Accept", "Sec-Websocket-Protocol", "Host",
}

// wsRelay is one proxied WebSocket connection: two pumps, one per direction.
// The first side to end decides how the connection ended: it records ws.close
// once and closes the other side with the same status.
type wsRelay struct {
	p        *Proxy
	id       string
	client   *websocket.Conn
	upstream *websocket.Conn
	once     sync.Once
}

func (p *Proxy) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if p.isClosed() {
		http.Error(w, "wireproof: the recording proxy is closed", http.StatusServiceUnavailable)
		return
	}
	target := p.target(r)
	if target.Scheme == "https" {
		target.Scheme = "wss"
	} else {
		target.Scheme = "ws"
	}
	hdr := r.Header.Clone()
	removeHopHeaders(hdr)
	for _, k := range wsHandshakeHeaders {
		hdr.Del(k)
	}
	mode := clientCompression(r.Header)
	up, resp, err := websocket.Dial(r.Context(), target.String(), &websocket.DialOptions{
		HTTPClient:      p.wsDial,
		HTTPHeader:      hdr,
		Subprotocols:    headerTokens(r.Header, "Sec-WebSocket-Protocol"),
		CompressionMode: mode,
	})
	if err != nil {
		p.refuseUpgrade(w, r, resp, err)
		return
	}
	id := "ws" + strconv.FormatUint(p.wsIDs.Add(1), 10)
	var protos []string
	if sp := up.Subprotocol(); sp != "" {
		protos = []string{sp}
	}
	c, aerr := websocket.Accept(corkingResponseWriter{w}, r, &websocket.AcceptOptions{
		Subprotocols:       protos,
		InsecureSkipVerify: true, // a local recording proxy: the client is ours
		CompressionMode:    mode,
	})
	attrs := fmt.Appendf(nil, `{"clientCompressed":%t,"upstreamCompressed":%t}`,
		aerr == nil && headerHasToken(w.Header(), "Sec-WebSocket-Extensions", "permessage-deflate"),
		headerHasToken(resp.Header, "Sec-WebSocket-Extensions", "permessage-deflate"))
	_, _ = p.rec.Emit(&bundle.Event{Kind: bundle.KindWSOpen, Conn: id, URL: r.URL.RequestURI(), Header: r.Header.Clone(), Name: up.Subprotocol(), Attrs: attrs})
	if aerr != nil {
		_, _ = p.rec.Emit(&bundle.Event{Kind: bundle.KindWSClose, Conn: id, Dir: bundle.DirClientToServer, Code: int(websocket.StatusAbnormalClosure), Err: "accepting the client: " + aerr.Error()})
		up.Close(websocket.StatusGoingAway, "wireproof: the client handshake failed")
		return
	}
	c.SetReadLimit(p.maxMsg)
	up.SetReadLimit(p.maxMsg)
	rl := &wsRelay{p: p, id: id, client: c, upstream: up}
	if !p.track(rl) {
		rl.shutdown()
		return
	}
	defer p.untrack(rl)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rl.pump(bundle.DirClientToServer)
	}()
	rl.pump(bundle.DirServerToClient)
	<-done
	c.CloseNow()
	up.CloseNow()
}

// clientCompression mirrors the client's permessage-deflate offer on both
// sides, so the upstream is asked for what the client asked for.
func clientCompression(h http.Header) websocket.CompressionMode {
	for _, v := range h.Values("Sec-WebSocket-Extensions") {
		for _, ext := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(ext, ";")
			if !strings.EqualFold(strings.TrimSpace(name), "permessage-deflate") {
				continue
			}
			if strings.Contains(params, "no_context_takeover") {
				return websocket.CompressionNoContextTakeover
			}
			return websocket.CompressionContextTakeover
		}
	}
	return websocket.CompressionDisabled
}

func headerTokens(h http.Header, key string) []string {
	var out []string
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// refuseUpgrade relays an upstream's refusal of the upgrade (a spent ticket
// gets 401, say) to the client, and records it as an HTTP exchange.
func (p *Proxy) refuseUpgrade(w http.ResponseWriter, r *http.Request, resp *http.Response, err error) {
	ex := &httpExchange{p: p, id: "h" + strconv.FormatUint(p.httpIDs.Add(1), 10)}
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
	removeHopHeaders(h)
	h.Del("Content-Length")
	status := resp.StatusCode
	if status == http.StatusSwitchingProtocols {
		status = http.StatusBadGateway // a 101 we could not use must not reach the client as one
	}
	w.WriteHeader(status)
	n, _ := w.Write(body)
	ex.end(int64(n), fmt.Errorf("websocket upgrade: %w", err))
}

// pump relays messages in one direction until its source ends.
func (rl *wsRelay) pump(dir bundle.Dir) {
	src, dst := rl.client, rl.upstream
	if dir == bundle.DirServerToClient {
		src, dst = rl.upstream, rl.client
	}
	ctx := rl.p.ctx
	var buf bytes.Buffer
	for {
		typ, rd, err := src.Reader(ctx)
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(rd)
		}
		if err != nil {
			rl.finish(dir, err)
			return
		}
		data := buf.Bytes()
		rec := data
		if rl.p.rec.Retains() {
			rec = bytes.Clone(data)
		}
		_, _ = rl.p.rec.Emit(&bundle.Event{Kind: bundle.KindWSMessage, Conn: rl.id, Dir: dir, Type: msgType(typ),
			Body: bundle.Payload{Data: rec, Binary: typ == websocket.MessageBinary}})
		if err := dst.Write(ctx, typ, data); err != nil {
			// The destination is gone or closing: the pump reading it sees
			// why and records it.
			return
		}
		if buf.Cap() > 1<<20 {
			buf = bytes.Buffer{} // do not pin one huge message's buffer
		}
	}
}

func msgType(t websocket.MessageType) string {
	if t == websocket.MessageBinary {
		return bundle.TypeBinary
	}
	return bundle.TypeText
}

// finish records how the side read by the dir pump ended, once per connection,
// and passes the end on to the other side: a close status as it was, a dead
// upstream as 1011 to the client, a vanished client as 1001 to the upstream.
func (rl *wsRelay) finish(dir bundle.Dir, err error) {
	rl.once.Do(func() {
		dst := rl.upstream
		if dir == bundle.DirServerToClient {
			dst = rl.client
		}
		ev := &bundle.Event{Kind: bundle.KindWSClose, Conn: rl.id, Dir: dir}
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			ev.Code, ev.Reason = int(ce.Code), ce.Reason
			_, _ = rl.p.rec.Emit(ev)
			dst.Close(ce.Code, ce.Reason)
			return
		}
		ev.Code = int(websocket.StatusAbnormalClosure)
		ev.Err = err.Error()
		_, _ = rl.p.rec.Emit(ev)
		if dir == bundle.DirServerToClient {
			dst.Close(websocket.StatusInternalError, "wireproof: upstream connection lost")
		} else {
			dst.Close(websocket.StatusGoingAway, "wireproof: client connection lost")
		}
	})
}

// shutdown ends the connection because the proxy is closing.
func (rl *wsRelay) shutdown() {
	rl.once.Do(func() {
		_, _ = rl.p.rec.Emit(&bundle.Event{Kind: bundle.KindWSClose, Conn: rl.id, Code: int(websocket.StatusGoingAway), Reason: "wireproof: recording stopped"})
		var wg sync.WaitGroup
		for _, c := range []*websocket.Conn{rl.client, rl.upstream} {
			wg.Go(func() { c.Close(websocket.StatusGoingAway, "wireproof: recording stopped") })
		}
		wg.Wait()
	})
}
