package bundle

import (
	"crypto/sha256"
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
	// Level is the zstd compression level. Default zstd.SpeedFastest: the
	// compressor is most of what recording costs per byte, and on recorded
	// NDJSON (BenchmarkCompression in bench/) it took about half the time of
	// SpeedDefault for a slightly better ratio (134 vs 127 on the
	// projection-heavy stream, 7.0 vs 6.8 on unique small messages).
	Level zstd.EncoderLevel
	// Clock returns nanoseconds since the recording started. Default: the
	// monotonic clock, from the moment the Writer was created. Tests set it.
	Clock func() int64
	// FrameInterval is how long (on Clock) a zstd frame stays open: a flush
	// ends the zstd block and keeps the compressor's history, and the first
	// flush at least FrameInterval after the frame began also ends the frame
	// and writes its checkpoint. Frames also end every frameMax decompressed
	// bytes and at Close. Default DefaultFrameInterval.
	FrameInterval time.Duration

	// frameFlushes, when set, ends the frame at every frameFlushes-th flush
	// instead of by FrameInterval: tests that need frames at known places.
	frameFlushes int
}

// DefaultFlushInterval is the FlushInterval used when none is set.
const DefaultFlushInterval = 100 * time.Millisecond

// DefaultFrameInterval is the FrameInterval used when none is set. A frame
// end costs about 75 bytes and the compressor's history; a crashed
// recording's events since the last frame end are read unverified (see
// docs/bundle-format.md, Flushing and crash safety).
const DefaultFrameInterval = 10 * time.Second

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("bundle: writer is closed")

// Writer writes a bundle. It is safe for concurrent use: Append assigns each
// event the next sequence number and the current time under one lock, so the
// order of lines in the file is the order in which Append was called.
//
// Only numbering the line and copying it into a batch happen under the lock.
// Encoding happens before it (see Encode), and compressing and hashing happen
// after it, on one background goroutine that takes batches in seq order from
// a bounded queue: when it falls behind, Append blocks rather than letting
// memory grow.
//
// Events are flushed to the underlying writer at least every FlushInterval and
// before Append returns for lifecycle kinds (see flushesAtOnce), so a recorder
// that is killed loses at most the last interval of non-lifecycle events. A
// flush ends a zstd block and keeps the frame, and with it the compressor's
// history; a frame ends (its checksum and a chained checkpoint) every
// FrameInterval, frameMax bytes and at Close, so a killed recorder's last
// events are read from the unfinished frame's blocks, unverified.
// Errors of the underlying writer are sticky: once one happens every later
// call returns it. An error met while compressing a batch in the background
// is returned by the next call.
type Writer struct {
	mu        sync.Mutex
	file      *os.File // set by Create, closed by Close
	clock     func() int64
	batch     []byte // lines not yet handed to the compressor
	seq       uint64 // the seq of the next line
	count     uint64 // events appended
	lastT     int64
	bytes     int64 // uncompressed bytes appended, for the trailer
	kinds     map[Kind]uint64
	unflushed bool // lines were appended since the last flush request
	armed     bool // the flusher has been told about them
	closed    bool
	closeErr  error // what Close returned
	kick      chan struct{}
	stop      chan struct{}
	stopped   chan struct{}
	interval  time.Duration

	jobs chan job    // batches for the compressor, in seq order
	free chan []byte // batch buffers the compressor is done with
	done chan struct{}

	// Owned by the compressor goroutine until done is closed.
	enc           *zstd.Encoder
	out           *chainWriter
	inFrame       int   // decompressed bytes in the frame being written
	frameAt       int64 // Clock time of the batch that began the frame being written
	frameStored   int64 // out.n when the frame being written began
	frameFlushed  int   // flushes in the frame being written
	written       int64 // decompressed bytes given to the encoder
	frameInterval int64
	frameFlushes  int

	errMu sync.Mutex
	err   error // the first write error, sticky
}

// job is one batch of complete lines for the compressor, or the tail of one
// huge line (release set: the Encoded it belongs to, released once written).
type job struct {
	lines    []byte
	release  *Encoded
	at       int64      // the Clock time of the last line appended before it
	flush    bool       // flush the encoder (end its block) after writing lines
	endFrame bool       // with flush: end the frame too
	ack      chan error // if set, receives the sticky error once done
}

const (
	// batchBytes is the size at which a batch goes to the compressor without
	// waiting for a flush: large enough that handing it over is rare, small
	// enough that compression overlaps with appending. Each hand-over may
	// wake the compressor's thread (a futex wake-up and a context switch):
	// at 64 KiB that was one per three recorded 20 KiB HTTP exchanges, at
	// 256 KiB one per twelve.
	batchBytes = 256 << 10
	// queuedBatches bounds the batches waiting for the compressor, and so the
	// memory a writer can hold: about queuedBatches*batchBytes (2 MiB) plus
	// the lines of single events larger than batchBytes.
	queuedBatches = 8
)

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
// An h.Format below FormatVersion (zero, or copied from an older bundle)
// is set to FormatVersion, and a zero h.Started to now. The
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
		o.Level = zstd.SpeedFastest
	}
	if o.FrameInterval <= 0 {
		o.FrameInterval = DefaultFrameInterval
	}
	start := time.Now()
	if o.Clock == nil {
		o.Clock = func() int64 { return int64(time.Since(start)) }
	}
	if h.Format < FormatVersion {
		h.Format = FormatVersion // a header read from an older bundle: the Writer writes its own format
	}
	if h.Started.IsZero() {
		h.Started = start
	}
	hdr, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("bundle: header: %w", err)
	}
	// A goroutine-free encoder: ending a frame then writes synchronously
	// on the compressor goroutine, which is what the crash guarantee needs.
	cw := &chainWriter{out: out, h: sha256.New()}
	enc, err := zstd.NewWriter(cw, zstd.WithEncoderLevel(o.Level), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true))
	if err != nil {
		return nil, fmt.Errorf("bundle: zstd: %w", err)
	}
	w := &Writer{
		enc:      enc,
		out:      cw,
		clock:    o.Clock,
		kinds:    make(map[Kind]uint64),
		kick:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		stopped:  make(chan struct{}),
		interval: o.FlushInterval,

		frameInterval: int64(o.FrameInterval),
		frameFlushes:  o.frameFlushes,
		jobs:          make(chan job, queuedBatches),
		free:          make(chan []byte, queuedBatches+2),
		done:          make(chan struct{}),
	}
	go w.compressor()
	w.mu.Lock()
	hev := &Event{Kind: KindHeader, Body: Payload{Data: hdr}}
	w.appendLocked(hev, encodeTail(hev), 0)
	// The header is a frame of its own, ended and checked at once: the
	// reader decodes the first frame as a stream (format 1 is one frame)
	// and learns the format from it.
	ack := make(chan error, 1)
	w.sendLocked(job{flush: true, endFrame: true, ack: ack})
	w.unflushed = false
	w.mu.Unlock()
	if err := <-ack; err != nil {
		w.mu.Lock()
		w.closed = true
		close(w.jobs)
		w.mu.Unlock()
		<-w.done
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
//
// Append is Encode followed by AppendEncoded.
func (w *Writer) Append(ev *Event) (uint64, error) {
	if err := checkAppendable(ev); err != nil {
		return 0, err
	}
	return w.appendEncoded(ev, encodeTail(ev), -1)
}

// AppendEncoded writes the event e was encoded from as the next line, as
// Append does, and releases e. The event's Seq and T are set before the line
// is written; the rest of the line is what the event was at Encode.
func (w *Writer) AppendEncoded(e *Encoded) (uint64, error) {
	ev := e.ev
	e.ev = nil
	return w.appendEncoded(ev, e, -1)
}

// Now reads the writer's clock: nanoseconds since the recording started,
// never earlier than the last line's t.
func (w *Writer) Now() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now()
}

// AppendEncodedAt is AppendEncoded for an event whose time t was read from Now
// when it happened, before the events appended since: its line gets t, or the
// previous line's t if that is later, so t never goes back in the file.
// A recorder that orders events as they happen and encodes them later uses it.
func (w *Writer) AppendEncodedAt(e *Encoded, t int64) (uint64, error) {
	ev := e.ev
	e.ev = nil
	return w.appendEncoded(ev, e, max(t, 0))
}

// appendEncoded appends ev, whose line without seq and t is in e, at time t
// (the clock if t is negative), and releases e.
func (w *Writer) appendEncoded(ev *Event, e *Encoded, t int64) (uint64, error) {
	w.mu.Lock()
	if err := w.failure(); err != nil {
		w.mu.Unlock()
		e.Release()
		return 0, err
	}
	if w.closed {
		w.mu.Unlock()
		e.Release()
		return 0, ErrClosed
	}
	if t < 0 {
		t = w.now()
	}
	seq := w.appendLocked(ev, e, max(t, w.lastT))
	w.count++
	var ack chan error
	if flushesAtOnce(ev.Kind) {
		ack = w.flushLocked()
	} else {
		if len(w.batch) >= batchBytes {
			w.sendLocked(job{})
		}
		if !w.armed {
			w.armed = true
			select {
			case w.kick <- struct{}{}:
			default:
			}
		}
	}
	w.mu.Unlock()
	if ack != nil {
		if err := <-ack; err != nil {
			return seq, err
		}
	}
	return seq, nil
}

// now reads the clock, never earlier than the last line's t. w.mu is held.
func (w *Writer) now() int64 {
	return max(w.clock(), w.lastT)
}

// appendLocked gives ev the next seq and time t, copies its line (e) into the
// batch and releases e. w.mu is held.
func (w *Writer) appendLocked(ev *Event, e *Encoded, t int64) uint64 {
	ev.Seq, ev.T = w.seq, t
	w.lastT = t
	n := len(w.batch)
	w.batch = appendLineHead(w.batch, ev.Seq, t)
	if e.inline {
		w.batch = append(w.batch, e.tail...)
		w.batch = append(w.batch, e.body...)
		w.batch = append(w.batch, e.post...)
		w.batch = append(w.batch, '\n')
		w.bytes += int64(len(w.batch) - n)
		e.Release()
	} else if e.body != nil {
		// A huge JSON payload goes to the compressor as it is, between the
		// batch that ends with the line's start and the one that begins
		// with its end.
		w.batch = append(w.batch, e.tail...)
		w.bytes += int64(len(w.batch)-n) + int64(len(e.body)) + int64(len(e.post)) + 1
		w.sendLocked(job{})
		body := e.body
		w.batch = append(w.batch, e.post...)
		w.batch = append(w.batch, '\n')
		w.jobs <- job{lines: body, release: e}
	} else if len(e.tail) > bigLine {
		// A huge line (a 64 MiB message) goes to the compressor as it is,
		// after the batch that ends with its head, instead of being copied:
		// the copy would hold the message a third time in memory.
		w.bytes += int64(len(w.batch)-n) + int64(len(e.tail)) + 1
		w.sendLocked(job{})
		w.jobs <- job{lines: e.tail, release: e}
		w.batch = append(w.batch, '\n')
	} else {
		w.batch = append(w.batch, e.tail...)
		w.batch = append(w.batch, '\n')
		w.bytes += int64(len(w.batch) - n)
		e.Release()
	}
	w.kinds[ev.Kind]++
	w.seq++
	w.unflushed = true
	return ev.Seq
}

// bigLine is the line length above which the encoded line is handed to the
// compressor without being copied into a batch.
const bigLine = 1 << 20

// sendLocked hands the batch to the compressor with j's flush and ack, and
// starts a new batch. It blocks while the queue is full, which is the
// backpressure on appenders. w.mu is held; the compressor never takes it.
func (w *Writer) sendLocked(j job) {
	j.lines = w.batch
	j.at = w.lastT
	select {
	case w.batch = <-w.free:
	default:
		w.batch = make([]byte, 0, batchBytes+batchBytes/4)
	}
	w.jobs <- j
}

// flushLocked sends the batch with a flush request and returns the channel
// that receives the outcome. w.mu is held.
func (w *Writer) flushLocked() chan error {
	ack := make(chan error, 1)
	w.sendLocked(job{flush: true, ack: ack})
	w.unflushed = false
	w.armed = false
	return ack
}

// compressor hashes and compresses batches in the order they were sent,
// until jobs is closed.
func (w *Writer) compressor() {
	defer close(w.done)
	for j := range w.jobs {
		if w.failure() == nil {
			if err := w.compress(j.lines, j.at); err != nil {
				w.fail(err)
			} else if j.flush {
				if err := w.flush(j.endFrame, j.at); err != nil {
					w.fail(err)
				}
			}
		}
		if j.release != nil {
			j.release.Release()
		} else if cap(j.lines) <= 2*batchBytes {
			select {
			case w.free <- j.lines[:0]:
			default:
			}
		}
		if j.ack != nil {
			j.ack <- w.failure()
		}
	}
}

// compress gives b, whose last line was appended at Clock time at, to the
// encoder, ending the frame every frameMax decompressed bytes, or when its
// stored bytes near frameMax (many small flushed blocks), so that a reader
// holds at most one frame of about that size. It writes at most a block at
// a time, so the stored size is checked often enough. Compressor goroutine
// only.
func (w *Writer) compress(b []byte, at int64) error {
	for len(b) > 0 {
		if w.inFrame == 0 {
			w.frameAt, w.frameStored, w.frameFlushed = at, w.out.n, 0
		}
		n := min(len(b), frameMax-w.inFrame, maxBlockSize)
		if _, err := w.enc.Write(b[:n]); err != nil {
			return fmt.Errorf("bundle: write: %w", err)
		}
		w.inFrame += n
		w.written += int64(n)
		b = b[n:]
		if w.inFrame >= frameMax || w.out.n-w.frameStored >= frameStoredEnd {
			if err := w.endFrame(false); err != nil {
				return err
			}
		}
	}
	return nil
}

// frameStoredEnd is the stored size at which the writer ends a frame: two
// blocks below frameMax, so what the encoder still holds (at most a block
// and its header) and the frame's end stay within frameStoredMax, which
// readers of format 2 enforce.
const frameStoredEnd = frameMax - 2*maxBlockSize

// flush makes everything given to the encoder decodable from the stored
// bytes: it ends the zstd block, keeping the frame and the compressor's
// history, and ends the frame as well (with its checkpoint) when end is
// set, or when the frame is due by FrameInterval (or frameFlushes). at is
// the Clock time of the flush request. Compressor goroutine only.
func (w *Writer) flush(end bool, at int64) error {
	if w.inFrame == 0 {
		return nil
	}
	w.frameFlushed++
	switch {
	case end:
	case w.frameFlushes > 0:
		end = w.frameFlushed >= w.frameFlushes
	default:
		end = at-w.frameAt >= w.frameInterval
	}
	if end {
		return w.endFrame(false)
	}
	if err := w.enc.Flush(); err != nil {
		return fmt.Errorf("bundle: flush: %w", err)
	}
	return nil
}

// endFrame ends the zstd frame being written (its last block and content
// checksum) and writes the checkpoint that chains it to what came before,
// in one write: a flush. final makes the checkpoint the seal. Nothing is
// written when the frame is empty. Compressor goroutine (or Close, once it
// has stopped) only.
func (w *Writer) endFrame(final bool) error {
	if w.inFrame == 0 && !final {
		return nil
	}
	w.out.hold = true
	if err := w.enc.Close(); err != nil {
		w.out.hold = false
		return fmt.Errorf("bundle: flush: %w", err)
	}
	c := checkpointInfo{offset: uint64(w.out.n), content: uint64(w.written), final: final}
	w.out.h.Sum(c.digest[:0])
	w.out.Write(appendCheckpoint(w.out.scratch[:0], c))
	if err := w.out.release(); err != nil {
		return fmt.Errorf("bundle: flush: %w", err)
	}
	w.inFrame = 0
	w.enc.Reset(w.out)
	return nil
}

// chainWriter is what the encoder writes to: it counts and hashes every
// stored byte (the checkpoints' chain) and can hold what is written until
// release, so a frame's end and its checkpoint reach the file in one write.
type chainWriter struct {
	out     io.Writer
	h       hash.Hash
	n       int64
	hold    bool
	held    []byte
	scratch [checkpointFrame]byte
}

func (c *chainWriter) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	if c.hold {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	return c.out.Write(p)
}

// release writes what was held and stops holding.
func (c *chainWriter) release() error {
	c.hold = false
	if len(c.held) == 0 {
		return nil
	}
	_, err := c.out.Write(c.held)
	if cap(c.held) > 1<<20 {
		c.held = nil
	} else {
		c.held = c.held[:0]
	}
	return err
}

// fail records err as the sticky error if there is none yet.
func (w *Writer) fail(err error) {
	w.errMu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.errMu.Unlock()
}

func (w *Writer) failure() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

// Flush writes everything appended so far to the underlying writer. When it
// returns, whatever its error, the writer is done with every body appended
// before: written, or dropped unread after a failure or Close.
func (w *Writer) Flush() error {
	w.mu.Lock()
	if err := w.failure(); err != nil {
		w.mu.Unlock()
		return err
	}
	if w.closed {
		// Close is under way: what was appended before is written (or,
		// on a failure, dropped unread) once the compressor is done, and
		// a caller may then reuse the bodies it appended.
		w.mu.Unlock()
		<-w.done
		return ErrClosed
	}
	var ack chan error
	if w.unflushed {
		ack = w.flushLocked()
	} else {
		// Nothing new, but a flush asked for earlier (by the flusher, or an
		// event that flushes at once) may still be on its way to the
		// compressor: wait until it is past that too.
		ack = make(chan error, 1)
		w.sendLocked(job{ack: ack})
	}
	w.mu.Unlock()
	return <-ack
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
		if w.unflushed && !w.closed && w.failure() == nil {
			w.flushLocked() // nobody waits: the next call reports an error
		}
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
// syncs and closes the file. It stops the background goroutines. Calling
// Close again returns the first Close's error.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		defer w.mu.Unlock()
		return w.closeErr
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.stopped

	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.batch) > 0 {
		w.sendLocked(job{})
	}
	close(w.jobs)
	<-w.done // the compressor has written everything; enc and digest are ours

	err := w.failure()
	if err == nil {
		body, jerr := json.Marshal(w.trailerLocked())
		if jerr != nil {
			err = fmt.Errorf("bundle: trailer: %w", jerr)
		} else {
			line := appendLineHead(nil, w.seq, w.now())
			line = appendEventTail(line, &Event{Kind: KindTrailer, Body: Payload{Data: body}})
			line = append(line, '\n')
			// The trailer's frame ends with the seal.
			if _, werr := w.enc.Write(line); werr != nil {
				err = fmt.Errorf("bundle: write: %w", werr)
			} else {
				w.inFrame += len(line)
				w.written += int64(len(line))
				err = w.endFrame(true)
			}
		}
	}
	if w.file != nil {
		if err == nil {
			if serr := w.file.Sync(); serr != nil {
				err = fmt.Errorf("bundle: sync: %w", serr)
			}
		}
		if cerr := w.file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("bundle: close: %w", cerr)
		}
	}
	if err != nil {
		w.fail(err)
	}
	w.closeErr = err
	return err
}

// trailerLocked describes the lines written so far.
func (w *Writer) trailerLocked() Trailer {
	kinds := make(map[Kind]uint64, len(w.kinds))
	for k, n := range w.kinds {
		kinds[k] = n
	}
	return Trailer{
		Events: w.seq,
		Kinds:  kinds,
		Bytes:  w.bytes,
	}
}
