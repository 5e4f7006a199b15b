package bundle

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/klauspost/compress/zstd"
)

// This file is the reader's view of the stored bytes: the zstd frames of a
// bundle and the checkpoints between them (see checkpoint.go), walked by
// their headers so the reader knows where each frame ends before it decodes
// it. A format 2 frame is decoded whole, once the checkpoint after it has
// vouched for its stored bytes (or DecodeAll has verified its content
// checksum), so every event of a complete frame comes from bytes whose
// place in the chain was verified. The Writer flushes zstd blocks, not
// frames, at its flush interval, so a file cut inside a frame (a killed
// recorder) holds complete blocks of it: those are decoded and given out
// as unverified content (Reader.Unverified counts their events) before the
// cut, unless the file ends with a seal, which makes the cut damage.
// Frame 1 (the header, or all of a format 1 bundle) is decoded as a
// stream, as format 1 always was.

// Frame limits. The Writer ends a frame every frameMax decompressed bytes,
// so a format 2 frame is never larger than that, stored or decoded (zstd's
// raw blocks bound the stored size to a few bytes per 128 KiB above it).
const (
	frameMax       = 4 << 20
	frameStoredMax = frameMax + frameMax/64
	frameDecodeMax = 2 * frameMax
	maxBlockSize   = 128 << 10
	// presizeStored is the stored size from which a frame is decoded into
	// a buffer of frameMax: a smaller one, at the compression ratios of
	// bundles (7x to a few 100x), decodes to little, and a small bundle's
	// reader keeps a small buffer.
	presizeStored = 4 << 10
)

// cutError is the stored stream ending inside a frame or a checkpoint: what
// a recorder killed mid-write leaves, unless the file was sealed.
type cutError struct {
	off  int64 // where the unit that was cut starts
	what string
}

func (e *cutError) Error() string {
	return fmt.Sprintf("the file ends inside %s that starts at byte %d", e.what, e.off)
}

// frameReader gives a bundle's decompressed content in chunks (chunk) and
// checks the stored bytes as it goes: the frames' structure and checksums,
// and the chain of checkpoints. Its errors are *DamagedError (the stored
// bytes are not what the writer wrote), *cutError (the file ends early),
// *FormatError (a window above the cap) or the source's I/O error.
type frameReader struct {
	name   string
	src    *bufio.Reader
	tail   *sourceReader // its last bytes, for the seal check at a cut
	window uint64
	format int // the header's format once read; 0 before

	stored   int64     // stored bytes consumed
	chain    hash.Hash // SHA-256 of the stored bytes consumed
	produced int64     // decompressed bytes returned

	frames     int  // data frames read
	sinceCheck bool // a data frame was read since the last checkpoint
	checks     int  // checkpoints read
	sealed     bool // the final checkpoint was read
	sealDigest []byte

	stream *zstd.Decoder // decodes frame 1 (and format 1's frames) as a stream
	whole  *zstd.Decoder // decodes format 2 frames with DecodeAll, their checkpoint checked
	// wholeChecked decodes a format 2 frame without a checkpoint after it,
	// checking its content checksum.
	wholeChecked *zstd.Decoder
	walk         frameWalk
	cur          io.Reader // the frame being returned, nil between frames
	buf          []byte    // stored bytes of the frame being decoded whole
	out          []byte    // its decompressed bytes
	outOff       int
	sbuf         []byte // what the stream decoder last gave

	// unverified is set once content no checkpoint vouches for was given
	// out: the complete blocks of a frame the file ends inside, or a whole
	// frame without the checkpoint after it (a cut file's last frame).
	unverified bool
	tailFrame  bool // f.out holds such content
	// tailChecked: that content is a whole frame whose content checksum
	// checked (its checkpoint was cut off), not an unfinished frame's
	// blocks, which nothing checks.
	tailChecked bool

	cut       error // set once the stored stream was found cut
	err       error // sticky
	streamErr error // how the frame the stream decoder read ended, if not cleanly
}

func newFrameReader(name string, src *bufio.Reader, tail *sourceReader, window uint64) (*frameReader, error) {
	dec, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1), // synchronous: no goroutines, partial frames decode up to the cut
		zstd.WithDecoderMaxMemory(window),
		zstd.WithDecoderMaxWindow(window))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: zstd: %w", name, err)
	}
	return &frameReader{name: name, src: src, tail: tail, window: window, chain: sha256.New(), stream: dec}, nil
}

func (f *frameReader) damaged(off int64, format string, args ...any) *DamagedError {
	return &DamagedError{Path: f.name, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// strict reports whether the format 2 rules apply: every data frame after
// the first followed by a checkpoint, frames decoded whole. Format 1 files
// are one frame and carry no checkpoints.
func (f *frameReader) strict() bool { return f.format != 1 }

// chunk returns the next piece of decompressed content: the rest of a
// frame decoded whole, or what the stream decoder gave. It is valid until
// the next call. At the clean end of the stored stream it returns io.EOF.
func (f *frameReader) chunk() ([]byte, error) {
	for {
		if f.err != nil {
			return nil, f.err
		}
		if f.outOff < len(f.out) {
			c := f.out[f.outOff:]
			f.outOff = len(f.out)
			f.produced += int64(len(c))
			if f.tailFrame {
				f.unverified = true
			}
			return c, nil
		}
		if f.cut != nil {
			// The unfinished frame's complete blocks have been given out.
			f.err = f.cut
			continue
		}
		if f.cur != nil {
			if f.sbuf == nil {
				f.sbuf = make([]byte, 64<<10)
			}
			n, err := f.cur.Read(f.sbuf)
			f.produced += int64(n)
			if err == io.EOF {
				f.cur = nil
				err = nil
			}
			if err != nil {
				f.cur = nil
				f.err = f.frameError(f.walk.start, err)
				f.streamErr = f.err
			}
			if n > 0 {
				return f.sbuf[:n], nil
			}
			continue
		}
		if err := f.next(); err != nil {
			f.err = err
		}
	}
}

// frameError classifies an error met decoding the frame at off.
func (f *frameReader) frameError(off int64, err error) error {
	var ce *cutError
	var fe *FormatError
	var de *DamagedError
	switch {
	case f.cut != nil:
		return f.cut
	case errors.As(err, &ce), errors.As(err, &fe), errors.As(err, &de):
		return err
	case f.tail.err != nil:
		return fmt.Errorf("bundle %s: %w", f.name, f.tail.err)
	case errors.Is(err, zstd.ErrWindowSizeExceeded), errors.Is(err, zstd.ErrDecoderSizeExceeded):
		// The declared window was checked against the cap (readHeader):
		// a frame that needs more than it declares is damaged.
		if f.strict() && f.frames > 1 {
			return f.damaged(off, "the zstd frame decodes to more than the %d bytes a wireproof frame holds (%v)", frameDecodeMax, err)
		}
		return f.damaged(off, "the zstd frame needs more than the window it declares (%v)", err)
	case errors.Is(err, zstd.ErrCRCMismatch):
		return f.damaged(off, "the zstd frame's content checksum does not match its content")
	}
	return f.damaged(off, "corrupt zstd data in the frame (%v)", err)
}

// streaming reports whether the content last given out came from the
// frame the stream decoder is reading (frame 1, or a format 1 bundle's one
// frame), whose checksum is checked only at its end: a line of it that is
// wrong may be a changed stored byte, which drain then tells.
func (f *frameReader) streaming() bool { return f.frames == 1 || !f.strict() }

// drain decodes the rest of the frame being streamed to its end, for
// nothing but its checks (the blocks' structure, the content checksum),
// discarding its content in the stream decoder's bounded memory, and
// returns how many bytes and newlines that content held, and how the frame
// ended: nil when it checked (or had already ended: f.err says how), a
// *DamagedError when it is corrupt or its checksum does not match, a
// *cutError when the file ends inside it, or an I/O error. It is only
// called when something is already wrong: it costs a decode of the rest
// of the frame.
func (f *frameReader) drain() (n int64, lines int, err error) {
	if f.cur == nil {
		return 0, 0, f.streamErr
	}
	if f.sbuf == nil {
		f.sbuf = make([]byte, 64<<10)
	}
	for {
		k, rerr := f.cur.Read(f.sbuf)
		n += int64(k)
		f.produced += int64(k)
		lines += bytes.Count(f.sbuf[:k], newline)
		switch {
		case rerr == io.EOF:
			f.cur = nil
			return n, lines, nil
		case rerr != nil:
			f.cur = nil
			f.err = f.frameError(f.walk.start, rerr)
			f.streamErr = f.err
			return n, lines, f.err
		}
	}
}

// next reads the next unit of the stored stream: a data frame (which it
// starts returning) or a checkpoint (which it checks). At the clean end of
// the stored stream it returns io.EOF.
func (f *frameReader) next() error {
	start := f.stored
	magic, err := f.src.Peek(4)
	if len(magic) == 0 && err == io.EOF {
		return io.EOF
	}
	if f.tail.err != nil {
		return fmt.Errorf("bundle %s: %w", f.name, f.tail.err)
	}
	if f.sealed {
		return f.damaged(start, "data after the seal (the checkpoint that ends a closed bundle)")
	}
	if len(magic) < 4 {
		return f.cutAt(start, "a zstd frame")
	}
	switch {
	case bytes.Equal(magic, zstdMagic):
		return f.dataFrame(start)
	case magic[0]&0xf0 == 0x50 && bytes.Equal(magic[1:], skippableMagic[1:]):
		return f.checkpoint(start, magic[0])
	}
	if f.frames > 0 {
		return f.damaged(start, "bytes that are neither a zstd frame nor a checkpoint (% x)", magic)
	}
	return &FormatError{Path: f.name, Msg: "is not a wireproof bundle: not zstd data"}
}

func (f *frameReader) cutAt(off int64, what string) error {
	f.cut = &cutError{off: off, what: what}
	return f.cut
}

// consume reads n stored bytes into dst (appending), hashing them.
func (f *frameReader) consume(dst []byte, n int) ([]byte, bool) {
	for n > 0 {
		b, err := f.src.Peek(min(n, f.src.Size()))
		if len(b) > 0 {
			f.chain.Write(b)
			dst = append(dst, b...)
			f.stored += int64(len(b))
			n -= len(b)
			f.src.Discard(len(b))
		}
		if err != nil && n > 0 {
			return dst, false
		}
	}
	return dst, true
}

func (f *frameReader) dataFrame(start int64) error {
	if f.strict() && f.frames > 0 && f.sinceCheck {
		return f.damaged(start, "a zstd frame follows a frame without the checkpoint between them")
	}
	f.walk = frameWalk{f: f, start: start}
	if err := f.walk.readHeader(); err != nil {
		return err
	}
	f.frames++
	f.sinceCheck = true
	if f.frames == 1 || !f.strict() {
		if f.walk.dict {
			return f.damaged(start, "the zstd frame needs a dictionary")
		}
		if err := f.stream.Reset(&f.walk); err != nil {
			return f.frameError(start, err)
		}
		f.cur = f.stream
		return nil
	}
	if !f.walk.checksum {
		return f.damaged(start, "the zstd frame has no content checksum")
	}
	if f.walk.dict {
		return f.damaged(start, "the zstd frame needs a dictionary")
	}
	f.buf = f.buf[:0]
	for {
		if len(f.buf) > frameStoredMax {
			return f.damaged(start, "the zstd frame is larger than the %d bytes a wireproof frame holds", frameStoredMax)
		}
		if cap(f.buf)-len(f.buf) < 64<<10 {
			f.buf = append(f.buf, make([]byte, 64<<10)...)[:len(f.buf)]
		}
		n, err := f.walk.Read(f.buf[len(f.buf):cap(f.buf)])
		f.buf = f.buf[:len(f.buf)+n]
		if err == io.EOF {
			break
		}
		var ce *cutError
		if errors.As(err, &ce) && !f.tailIsSeal() {
			return f.unfinishedFrame(start)
		}
		if err != nil {
			return err
		}
	}
	// The checkpoint after the frame vouches for every stored byte of it
	// (SHA-256, before a byte is decoded), so the frame's own checksum is
	// checked only when there is none: the last frame of a cut file.
	var cp *checkpointInfo
	cpStart := f.stored
	if h, _ := f.src.Peek(checkpointFrame); len(h) == checkpointFrame && bytes.Equal(h[:4], skippableMagic) {
		c, err := f.readCheckpoint(cpStart, h[0])
		if err != nil {
			return err
		}
		cp = &c
	}
	dec, err := f.decoder(cp == nil)
	if err != nil {
		return err
	}
	if cap(f.out) < frameMax && len(f.buf) >= presizeStored {
		// DecodeAll appends block by block, and a buffer grown as it
		// decodes is copied over and over (a quarter more each time) on
		// the first frame: a stored frame this large is given the
		// capacity of the largest frame at once, kept for the next.
		f.out = make([]byte, 0, frameMax)
	}
	out, err := dec.DecodeAll(f.buf, f.out[:0])
	if err != nil {
		return f.frameError(start, err)
	}
	f.out, f.outOff = out, 0
	if cp != nil {
		return f.acceptCheckpoint(cpStart, *cp, f.produced+int64(len(out)))
	}
	f.tailFrame, f.tailChecked = true, true
	return nil
}

// unfinishedFrame decodes the complete blocks of the frame starting at
// start, which the file ends inside and which is not sealed: the frame a
// recorder was writing when it was killed. The Writer flushes a block (not
// the frame) every interval, so those blocks hold every event it flushed;
// nothing vouches for them but that they decode (no checksum, no
// checkpoint), so they are given out as unverified content, followed by
// the cut. A block that does not decode is damage.
func (f *frameReader) unfinishedFrame(start int64) error {
	complete := f.buf[:f.walk.complete]
	f.out, f.outOff, f.tailFrame, f.tailChecked = f.out[:0], 0, true, false
	if f.walk.blocks == 0 {
		return nil
	}
	// The content checksum, if the frame got as far, is cut: a decoder that
	// expects it would hold back the last block. The copy decoded here is
	// told it has none (its frame header's checksum flag cleared).
	complete[4] &^= 0x04
	if err := f.stream.Reset(bytes.NewReader(complete)); err != nil {
		return f.damaged(start, "the unfinished zstd frame does not decode (%v)", err)
	}
	for len(f.out) <= frameDecodeMax {
		if cap(f.out)-len(f.out) < 64<<10 {
			f.out = append(f.out, make([]byte, 64<<10)...)[:len(f.out)]
		}
		n, err := f.stream.Read(f.out[len(f.out):cap(f.out)])
		f.out = f.out[:len(f.out)+n]
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
			return nil
		}
		return f.damaged(start, "a complete block of the unfinished zstd frame does not decode (%v)", err)
	}
	return f.damaged(start, "the zstd frame decodes to more than the %d bytes a wireproof frame holds", frameDecodeMax)
}

// decoder returns the decoder of whole frames that checks their content
// checksums (checked) or leaves them to the checkpoints.
func (f *frameReader) decoder(checked bool) (*zstd.Decoder, error) {
	p := &f.whole
	if checked {
		p = &f.wholeChecked
	}
	if *p == nil {
		dec, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(min(f.window, frameDecodeMax)),
			zstd.WithDecoderMaxWindow(f.window),
			zstd.IgnoreChecksum(!checked))
		if err != nil {
			return nil, fmt.Errorf("bundle %s: zstd: %w", f.name, err)
		}
		*p = dec
	}
	return *p, nil
}

// checkpoint reads and checks the checkpoint starting at start.
func (f *frameReader) checkpoint(start int64, id byte) error {
	c, err := f.readCheckpoint(start, id)
	if err != nil {
		return err
	}
	return f.acceptCheckpoint(start, c, f.produced)
}

// readCheckpoint reads the checkpoint starting at start and checks it
// against the stored bytes before it: its place and the chain's digest.
func (f *frameReader) readCheckpoint(start int64, id byte) (checkpointInfo, error) {
	head, _ := f.src.Peek(8)
	if len(head) < 8 {
		return checkpointInfo{}, f.cutAt(start, "a checkpoint")
	}
	size := binary.LittleEndian.Uint32(head[4:])
	if id != skippableMagic[0] || size != checkpointSize {
		return checkpointInfo{}, f.damaged(start, "a skippable zstd frame (id %d, %d bytes) that is not a wireproof checkpoint", id&0xf, size)
	}
	if !f.strict() {
		return checkpointInfo{}, f.damaged(start, "a checkpoint in a format %d bundle, which has none", f.format)
	}
	want := f.chain.Sum(nil) // the chain before this checkpoint's own bytes
	body, ok := f.consume(nil, checkpointFrame)
	if !ok {
		return checkpointInfo{}, f.cutAt(start, "a checkpoint")
	}
	c := parseCheckpoint(body[8:])
	switch {
	case f.frames == 0 || !f.sinceCheck:
		return c, f.damaged(start, "a checkpoint without a zstd frame before it")
	case c.flags&^1 != 0:
		return c, f.damaged(start, "the checkpoint has unknown flags %#x", c.flags)
	case c.offset != uint64(start):
		return c, f.damaged(start, "the checkpoint says it is at byte %d", c.offset)
	case !bytes.Equal(c.digest[:], want):
		return c, f.damaged(start, "the checkpoint's digest %x does not match the stored bytes before it (%x)", c.digest, want)
	}
	return c, nil
}

// acceptCheckpoint checks the decompressed bytes c counts against content,
// those of the frames before it, and takes c as the last checkpoint.
func (f *frameReader) acceptCheckpoint(start int64, c checkpointInfo, content int64) error {
	if c.content != uint64(content) {
		return f.damaged(start, "the checkpoint counts %d decompressed bytes before it, the frames hold %d", c.content, content)
	}
	f.checks++
	f.sinceCheck = false
	if c.final {
		f.sealed = true
		f.sealDigest = c.digest[:]
	}
	return nil
}

// tailIsSeal reports whether the stored stream, which has ended, ends with
// a seal: the final checkpoint, at its own offset. A file that ends so was
// closed, so a frame that runs past its end is damage, not a cut.
func (f *frameReader) tailIsSeal() bool {
	t := f.tail.last()
	if len(t) < checkpointFrame {
		return false
	}
	t = t[len(t)-checkpointFrame:]
	if !bytes.Equal(t[:4], skippableMagic) || binary.LittleEndian.Uint32(t[4:]) != checkpointSize {
		return false
	}
	c := parseCheckpoint(t[8:])
	return c.final && c.offset == uint64(f.tail.n)-checkpointFrame
}

func (f *frameReader) close() {
	f.stream.Close()
	for _, d := range []*zstd.Decoder{f.whole, f.wholeChecked} {
		if d != nil {
			d.Close()
		}
	}
}

// frameWalk returns the stored bytes of one zstd frame (RFC 8878 section
// 3.1.1) as they are consumed, reading its block headers to know where it
// ends, and io.EOF there.
type frameWalk struct {
	f        *frameReader
	start    int64
	checksum bool
	dict     bool
	pending  []byte // bytes consumed but not yet returned
	left     int    // bytes of the current block still to return
	last     bool   // the current block is the last
	tailLeft int    // checksum bytes still to return after the last block
	done     bool
	returned int  // bytes returned so far
	inBlock  bool // a block's header has been read and its end not yet returned
	complete int  // bytes returned up to the end of the last complete block
	blocks   int  // complete blocks
	hdr      [maxFrameHeader]byte
}

// frameHeaderLen is the length of a zstd frame header whose descriptor
// byte is fhd: magic, descriptor, window descriptor, dictionary id and
// frame content size.
func frameHeaderLen(fhd byte) int {
	n := 5
	if fhd&0x20 == 0 {
		n++ // window descriptor
	}
	n += [4]int{0, 1, 2, 4}[fhd&3]
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fhd>>6 == 0 && fhd&0x20 != 0 {
		fcs = 1
	}
	return n + fcs
}

// readHeader consumes the frame header and checks it.
func (w *frameWalk) readHeader() error {
	f := w.f
	b, _ := f.src.Peek(5)
	if len(b) < 5 {
		return f.cutAt(w.start, "a zstd frame")
	}
	fhd := b[4]
	n := frameHeaderLen(fhd)
	if fhd&0x08 != 0 {
		return f.damaged(w.start, "the zstd frame header has its reserved bit set")
	}
	h, ok := f.consume(w.hdr[:0], n)
	if !ok {
		return f.cutAt(w.start, "a zstd frame")
	}
	if win, ok := frameWindow(h); ok && win > f.window {
		if f.frames > 0 && f.strict() {
			return f.damaged(w.start, "the zstd frame declares a window of %s, above any wireproof writes", sizeOf(win))
		}
		return &FormatError{Path: f.name, Msg: fmt.Sprintf("is a zstd stream whose window (%s) is above this reader's cap of %s (ReaderOptions.MaxDecoderMemory), "+
			"so it is not decoded: wireproof's Writer never uses one so large; decompress it and compress it again with a smaller window (zstd without --long)",
			sizeOf(win), sizeOf(f.window))}
	}
	w.checksum = fhd&0x04 != 0
	w.dict = fhd&3 != 0
	w.pending = h
	return nil
}

func (w *frameWalk) Read(p []byte) (int, error) {
	f := w.f
	n := 0
	for len(p) > 0 {
		if len(w.pending) > 0 {
			c := copy(p, w.pending)
			w.pending = w.pending[c:]
			p = p[c:]
			n += c
			w.returned += c
			continue
		}
		if w.left > 0 {
			b, err := f.src.Peek(min(w.left, len(p), f.src.Size()))
			if len(b) == 0 && err != nil {
				return n, f.cutAt(w.start, "a zstd frame")
			}
			f.chain.Write(b)
			c := copy(p, b)
			f.src.Discard(c)
			f.stored += int64(c)
			w.left -= c
			p = p[c:]
			n += c
			w.returned += c
			continue
		}
		if w.inBlock {
			// A block's bytes have all been returned.
			w.inBlock = false
			w.blocks++
			w.complete = w.returned
		}
		if w.done {
			if n > 0 {
				return n, nil
			}
			return 0, io.EOF
		}
		if w.last {
			// The content checksum, if any, then the end.
			w.done = true
			if w.checksum {
				w.left = 4
			}
			continue
		}
		h, ok := f.consume(w.hdr[:0], 3)
		if !ok {
			return n, f.cutAt(w.start, "a zstd frame")
		}
		bh := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
		w.last = bh&1 != 0
		size := int(bh >> 3)
		switch (bh >> 1) & 3 {
		case 0, 2: // raw, compressed
			w.left = size
		case 1: // RLE: one byte
			w.left = 1
		default:
			return n, f.damaged(f.stored-3, "a zstd block of the reserved type")
		}
		if size > maxBlockSize {
			return n, f.damaged(f.stored-3, "a zstd block of %d bytes, above the format's %d", size, maxBlockSize)
		}
		w.pending = h
		w.inBlock = true
	}
	return n, nil
}
