// Package ends holds the client-facing ends the proxy's benchmarks measure
// against: a WebSocket sink and echo server and a JSON API, and the
// messages and body they send. The benchmarks of ./bench and the
// independent client (bench/independent) share them, so both measure the
// same traffic; it links nothing of wireproof's.
package ends

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// MessageSize is the length of a Message.
const MessageSize = 1024

// Message returns a 1 KiB JSON text message that differs from its
// neighbours the way RPC stream chunks do.
func Message(n int) []byte {
	b := fmt.Appendf(make([]byte, 0, MessageSize), `{"_tag":"Chunk","requestId":"%d","values":[{"type":"thread.message.delta","sequence":%d,"delta":"`, n%97, n)
	for len(b) < MessageSize-4 {
		b = append(b, "lorem ipsum dolor sit amet "[n%7:]...)
	}
	return append(b[:MessageSize-4], `"}]}`...)
}

// Sink counts the messages of a connection and answers "done" with the
// count.
func Sink() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(64 << 20)
		ctx := context.Background()
		n := 0
		buf := make([]byte, 4096)
		for {
			_, rd, err := c.Reader(ctx)
			if err != nil {
				return
			}
			m, _ := io.ReadFull(rd, buf)
			io.Copy(io.Discard, rd)
			if string(buf[:m]) == "done" {
				c.Write(ctx, websocket.MessageText, []byte(strconv.Itoa(n)))
				continue
			}
			n++
		}
	})
}

// Echo echoes every message.
func Echo() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := context.Background()
		for {
			typ, b, err := c.Read(ctx)
			if err != nil || c.Write(ctx, typ, b) != nil {
				return
			}
		}
	})
}

// JSONBody is a 20 KiB JSON list of threads, as T3's API answers.
func JSONBody() []byte {
	body := []byte(`{"threads":[` + strings.Repeat(`{"id":"thr_0123456789","title":"a thread","state":"idle","messages":12},`, 280))
	return append(body[:len(body)-1], "]}"...)
}

// JSONDistinct serves body as JSON does, but with the first thread's id
// (the ten digits after its "thr_") numbered by request, so that no two
// answers are the same bytes: what the recorder's memo of repeated payloads
// cannot spare (internal/repeat), the reference for a repeated poll.
func JSONDistinct(body []byte) http.Handler {
	at := bytes.Index(body, []byte("thr_")) + len("thr_")
	var n atomic.Uint64
	pool := sync.Pool{New: func() any { return new([]byte) }}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bp := pool.Get().(*[]byte)
		defer pool.Put(bp)
		b := append((*bp)[:0], body...)
		*bp = b
		for i, v := at+9, n.Add(1); i >= at; i, v = i-1, v/10 {
			b[i] = '0' + byte(v%10)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	})
}

// JSON serves body as application/json, with its length, at every path.
func JSON(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
}
