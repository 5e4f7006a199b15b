package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// WriterOptions configure a Writer. A nil *WriterOptions means all defaults.
type WriterOptions struct {
	// FlushInterval bounds how long an appended event may sit in the
	// compressor before it reaches the underlying writer, and so how much a
	// killed recorder can lose. Default 100ms.
	FlushInterval time.Duration
	// Level is the zstd compression level. Default zstd.SpeedDefault, which
	// keeps Append well above the proxy's message rate (see BenchmarkAppend)
	// while compressing NDJSON about as well as the slower levels.
	Level zstd.EncoderLevel
	// Clock returns nanoseconds since the recording started. Default: the
	// monotonic clock, from the moment the Writer was created. Tests set it.
	Clock func() int64
}

// DefaultFlushInterval is the FlushInterval used when none is set.
const DefaultFlushInterval = 100 * time.Millisecond

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("bundle: writer is closed")

// Writer writes a bundle. It is safe for concurrent use: Append assigns each
// event the next sequence number and the current time under one lock, so the
// order of lines in the file is the order in which Append was called.
//
// Events are flushed to the underlying writer at least every FlushInterval and
// at once for lifecycle kinds (see flushesAtOnce), so a recorder that is killed
// loses at most the last interval of non-lifecycle events. Errors of the
// underlying writer are sticky: once one happens every later call returns it.
type Writer struct {
	mu       sync.Mutex
	enc      *zstd.Encoder
	file     *os.File // set by Create, closed by Close
	clock    func() int64
	digest   hash.Hash
	line     []byte // reused encoding buffer
	seq      uint64 // the seq of the next line
	count    uint64 // events appended
	lastT    int64
	bytes    int64 // uncompressed bytes written, for the trailer
	kinds    map[Kind]uint64
	dirty    bool // bytes are in the encoder that have not been flushed
	armed    bool // the flusher has been told about them
	err      error
	closed   bool
	kick     chan struct{}
	stop     chan struct{}
	stopped  chan struct{}
	interval time.Duration
}

// Create creates a new bundle file at path with mode 0600 and returns a Writer
// for it. It refuses to overwrite an existing file: evidence is never clobbered.
func Create(path string, h Header, opts *WriterOptions) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("bundle: create: %w", err)
	}
	w, err := NewWriter(f, h, opts)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	w.file = f
	return w, nil
}

// NewWriter starts a bundle on out: it writes the header line and flushes it.
// A zero h.Format is set to FormatVersion and a zero h.Started to now. The
// caller closes out after Close.
func NewWriter(out io.Writer, h Header, opts *WriterOptions) (*Writer, error) {
	var o WriterOptions
	if opts != nil {
		o = *opts
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	if o.Level == 0 {
		o.Level = zstd.SpeedDefault
	}
	start := time.Now()
	if o.Clock == nil {
		o.Clock = func() int64 { return int64(time.Since(start)) }
	}
	if h.Format == 0 {
		h.Format = FormatVersion
	}
	if h.Started.IsZero() {
		h.Started = start
	}
	hdr, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("bundle: header: %w", err)
	}
	// One goroutine-free encoder: Flush then writes synchronously, which is
	// what the crash guarantee needs.
	enc, err := zstd.NewWriter(out, zstd.WithEncoderLevel(o.Level), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("bundle: zstd: %w", err)
	}
	w := &Writer{
		enc:      enc,
		clock:    o.Clock,
		digest:   sha256.New(),
		kinds:    make(map[Kind]uint64),
		kick:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		stopped:  make(chan struct{}),
		interval: o.FlushInterval,
	}
	w.mu.Lock()
	w.writeLine(&Event{Kind: KindHeader, Body: Payload{Data: hdr}})
	w.flushLocked()
	err = w.err
	w.mu.Unlock()
	if err != nil {
		return nil, err
	}
	go w.flusher()
	return w, nil
}

// flushesAtOnce reports the lifecycle kinds that are flushed as soon as they
// are appended: they mark the moments a reader of a crashed run most needs.
// http.end is not one of them: it comes once per HTTP exchange, so flushing
// there cost the proxy a zstd block and a write per request (7.5% of the CPU
// of 8 concurrent clients) for data the interval flush writes anyway.
func flushesAtOnce(k Kind) bool {
	switch k {
	case KindWSOpen, KindWSClose, KindGateRequest, KindGateRelease,
		KindProcStart, KindProcReady, KindProcSignal, KindProcExit,
		KindMark, KindVerdict, KindArtifact:
		return true
	}
	return false
}

// Append writes ev as the next line. It sets ev.Seq to the next sequence
// number and ev.T to the clock (never earlier than the previous event's T),
// and returns the seq. ev.Kind must be set and must not be header or trailer;
// ev.Attrs, if set, must be one JSON value without line breaks.
func (w *Writer) Append(ev *Event) (uint64, error) {
	switch ev.Kind {
	case "":
		return 0, errors.New("bundle: append: event has no kind")
	case KindHeader, KindTrailer:
		return 0, fmt.Errorf("bundle: append: kind %q is written by the Writer itself", ev.Kind)
	}
	if !validAttrs(ev.Attrs) {
		return 0, fmt.Errorf("bundle: append: %s event attrs are not one JSON value on one line", ev.Kind)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, ErrClosed
	}
	t := w.clock()
	if t < w.lastT {
		t = w.lastT
	}
	ev.T = t
	seq := w.writeLine(ev)
	if w.err != nil {
		return 0, w.err
	}
	w.count++
	if flushesAtOnce(ev.Kind) {
		w.flushLocked()
	} else if !w.armed {
		w.armed = true
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	return seq, w.err
}

// writeLine encodes ev with the next seq and writes it. w.mu is held.
func (w *Writer) writeLine(ev *Event) uint64 {
	ev.Seq = w.seq
	w.lastT = ev.T
	w.line = AppendEvent(w.line[:0], ev)
	w.line = append(w.line, '\n')
	if _, err := w.enc.Write(w.line); err != nil {
		w.err = fmt.Errorf("bundle: write: %w", err)
		return ev.Seq
	}
	if ev.Kind != KindTrailer {
		w.digest.Write(w.line)
		w.bytes += int64(len(w.line))
		w.kinds[ev.Kind]++
	}
	w.seq++
	w.dirty = true
	if cap(w.line) > 1<<20 {
		w.line = nil // do not pin the buffer of one huge message
	}
	return ev.Seq
}

// Flush writes everything appended so far to the underlying writer.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed && w.err == nil {
		return ErrClosed
	}
	w.flushLocked()
	return w.err
}

func (w *Writer) flushLocked() {
	if w.err != nil || !w.dirty {
		return
	}
	if err := w.enc.Flush(); err != nil {
		w.err = fmt.Errorf("bundle: flush: %w", err)
		return
	}
	w.dirty = false
	w.armed = false
}

// flusher flushes within one interval of the first unflushed append, and
// sleeps while there is nothing to flush.
func (w *Writer) flusher() {
	defer close(w.stopped)
	timer := time.NewTimer(w.interval)
	timer.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		}
		timer.Reset(w.interval)
		select {
		case <-w.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		w.mu.Lock()
		w.flushLocked()
		w.armed = false
		w.mu.Unlock()
	}
}

// Count returns the number of events appended so far, the header excluded.
func (w *Writer) Count() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.count
}

// Close writes the trailer, ends the zstd frame and, for a Writer from Create,
// syncs and closes the file. It stops the background flusher. Calling Close
// again returns the first Close's error.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		defer w.mu.Unlock()
		return w.err
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.stopped

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		tr := w.trailerLocked()
		body, err := json.Marshal(tr)
		if err != nil {
			w.err = fmt.Errorf("bundle: trailer: %w", err)
		} else {
			t := w.clock()
			if t < w.lastT {
				t = w.lastT
			}
			w.writeLine(&Event{T: t, Kind: KindTrailer, Body: Payload{Data: body}})
		}
	}
	if w.err == nil {
		if err := w.enc.Close(); err != nil {
			w.err = fmt.Errorf("bundle: close: %w", err)
		}
	}
	if w.file != nil {
		if w.err == nil {
			if err := w.file.Sync(); err != nil {
				w.err = fmt.Errorf("bundle: sync: %w", err)
			}
		}
		if err := w.file.Close(); err != nil && w.err == nil {
			w.err = fmt.Errorf("bundle: close: %w", err)
		}
	}
	return w.err
}

func (w *Writer) trailerLocked() Trailer {
	kinds := make(map[Kind]uint64, len(w.kinds))
	for k, n := range w.kinds {
		kinds[k] = n
	}
	return Trailer{
		Events: w.seq,
		Kinds:  kinds,
		Bytes:  w.bytes,
		Digest: "sha256:" + hex.EncodeToString(w.digest.Sum(nil)),
	}
}
