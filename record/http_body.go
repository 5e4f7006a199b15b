package record

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/redact"
)

// decodeChunk is the size of the pieces a compressed body is decoded in.
const decodeChunk = 32 << 10

// errDecodeStopped ends a decoder's input once it stopped reading.
var errDecodeStopped = errors.New("record: decoding stopped")

// bodyRecorder records one direction of one HTTP exchange's body: it decodes a
// body the sender compressed (Content-Encoding gzip, deflate, br or zstd) so
// the recording holds readable, redactable text, caps what is recorded, and
// passes streamed chunks through a bodyStream so no secret is cut between two
// http.body events. The wire bytes themselves are relayed untouched by the
// caller.
//
// Decoding runs on a goroutine of its own fed through a pipe; write returns
// once the decoder has taken the chunk, so memory stays bounded.
type bodyRecorder struct {
	ex     *httpExchange
	dir    bundle.Dir
	coding string // the content coding being decoded, "" for identity
	attrs  []byte // attrs of every http.body event: {"decoded":"gzip"}

	mu     sync.Mutex // serialises write and close (the transport reads request bodies on its own goroutine)
	stream bodyCutter
	closed bool

	// Decoding only.
	pw        *io.PipeWriter
	done      chan struct{}
	decodeErr error
}

// contentCoding returns the one content coding h names that bodyRecorder
// decodes, "" for none or identity, or the header's value if it names any
// other coding or several (the body is then recorded as it is).
func contentCoding(h http.Header) (coding string, known bool) {
	v := strings.ToLower(strings.TrimSpace(strings.Join(h.Values("Content-Encoding"), ",")))
	switch v {
	case "", "identity":
		return "", true
	case "gzip", "x-gzip", "deflate", "br", "zstd":
		return v, true
	}
	return v, false
}

// bodyCutter cuts a body into pieces that can each be redacted on their own
// (redact.Stream, or redact.EventStream for server-sent events).
type bodyCutter interface {
	Next(chunk []byte) []byte
	Flush(ended bool) []byte
}

// isEventStream reports whether h says the body is server-sent events.
func isEventStream(h http.Header) bool {
	mt, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

func newBodyRecorder(ex *httpExchange, dir bundle.Dir, h http.Header) *bodyRecorder {
	var stream bodyCutter = redact.NewStream(ex.p.rec.red)
	if isEventStream(h) {
		// A text streamed as deltas is redacted joined (a secret split
		// across two events reaches no disk); the wire bytes pass at once.
		stream = redact.NewEventStream(ex.p.rec.red)
	}
	br := &bodyRecorder{ex: ex, dir: dir, stream: stream}
	coding, known := contentCoding(h)
	switch {
	case coding == "":
	case known:
		br.coding = coding
		br.attrs = jsonAttr("decoded", coding)
	default:
		br.attrs = jsonAttr("encoding", coding)
	}
	return br
}

// write records a chunk of a streamed body as it crossed the wire.
func (br *bodyRecorder) write(p []byte) {
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.closed || len(p) == 0 {
		return
	}
	if br.coding == "" {
		if !br.record(p, false) {
			br.closed = true
		}
		return
	}
	if br.pw == nil {
		pr, pw := io.Pipe()
		br.pw, br.done = pw, make(chan struct{})
		go br.decode(pr)
	}
	if _, err := br.pw.Write(p); err != nil { // returns once the decoder took p
		br.closed = true // the decoder stopped: cap reached, or undecodable
		br.pw.Close()
		<-br.done
		br.noteDecodeErr()
	}
}

// record passes decoded bytes through the stream and records what it releases.
// It reports false once the body cap is reached.
func (br *bodyRecorder) record(p []byte, owned bool) bool {
	n := br.ex.take(br.dir, int64(len(p)))
	capped := n < int64(len(p))
	if piece := br.stream.Next(p[:n]); len(piece) > 0 {
		br.ex.emitBody(br.dir, piece, owned, br.attrs)
	}
	if capped {
		// What is held of a cut body: nothing of a Stream, the held events
		// (their tails that could begin a secret dropped) of an EventStream.
		if tail := br.stream.Flush(false); len(tail) > 0 {
			br.ex.emitBody(br.dir, tail, true, br.attrs)
		}
		return false
	}
	return true
}

func (br *bodyRecorder) decode(pr *io.PipeReader) {
	defer close(br.done)
	defer pr.CloseWithError(errDecodeStopped)
	dec, err := newDecoder(br.coding, pr)
	if err != nil {
		br.decodeErr = err
		return
	}
	if c, ok := dec.(io.Closer); ok {
		defer c.Close()
	}
	buf := make([]byte, decodeChunk)
	for {
		n, err := dec.Read(buf)
		if n > 0 && !br.record(buf[:n], false) {
			return
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			br.decodeErr = err
			return
		}
	}
}

// close ends the body: ended says it ended normally (not cut off). It records
// what the stream held back and, for a decoded body, waits for the decoder.
// A nil bodyRecorder (a request without a body) has nothing to close.
func (br *bodyRecorder) close(ended bool) {
	if br == nil {
		return
	}
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.closed {
		return
	}
	br.closed = true
	if br.pw != nil {
		br.pw.Close()
		<-br.done
		if br.noteDecodeErr() {
			ended = false
		}
	}
	if tail := br.stream.Flush(ended); len(tail) > 0 {
		br.ex.emitBody(br.dir, tail, true, br.attrs)
	}
}

// noteDecodeErr passes a decoding error on to http.end once the decoder has
// stopped, and reports whether there was one.
func (br *bodyRecorder) noteDecodeErr() bool {
	if br.decodeErr == nil {
		return false
	}
	br.ex.setDecodeErr(br.dir, br.coding, br.decodeErr)
	return true
}

// newDecoder returns a reader decoding coding from r.
func newDecoder(coding string, r io.Reader) (io.Reader, error) {
	switch coding {
	case "gzip", "x-gzip":
		return gzip.NewReader(r)
	case "deflate":
		// HTTP's deflate is zlib-wrapped; some servers send raw deflate.
		br := bufio.NewReader(r)
		if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	case "br":
		return brotli.NewReader(r), nil
	case "zstd":
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<27))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	}
	return nil, fmt.Errorf("unknown content coding %q", coding)
}

// jsonAttr returns the attrs object {key: value}.
func jsonAttr(key, value string) []byte {
	b, _ := json.Marshal(map[string]string{key: value})
	return b
}
