package bundle

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/wireproof/wireproof/internal/regfile"
)

// ReaderOptions configure a Reader. A nil *ReaderOptions means all defaults.
type ReaderOptions struct {
	// Name is used in error messages. Open sets it to the path.
	Name string
	// MaxLine caps the length of one line; a longer line is a FormatError.
	// Default DefaultMaxLine, which holds a 64 MiB message base64-encoded.
	MaxLine int
	// MaxDecoderMemory caps the zstd window, and so the decoder's memory.
	// Default DefaultMaxDecoderMemory.
	MaxDecoderMemory uint64
	// SkipBody, when set, is asked for each event's kind; when it returns
	// true the payload is not decoded and Body.Data is nil. The envelope is
	// still checked in full. A replayer that only needs some families (say,
	// ws.message but not proc.log) skips the base64 and unescaping work of
	// the rest.
	SkipBody func(Kind) bool
}

// Defaults of ReaderOptions.
const (
	DefaultMaxLine          = 96 << 20 // a 64 MiB message is 85.4 MiB in base64
	DefaultMaxDecoderMemory = 64 << 20
)

var newline = []byte{'\n'}

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// HasMagic reports whether b, the first bytes of a file, start as a bundle
// (any zstd frame) does: what a tool that writes files checks before it
// writes over one.
func HasMagic(b []byte) bool { return bytes.HasPrefix(b, zstdMagic) }

// Reader reads a bundle as a stream of events, in bounded memory. It is not
// safe for concurrent use.
//
// A bundle reads as one of three. Verified: Next stops with io.EOF at the
// trailer, which matched, and (format 2) the seal after it ends the file.
// Truncated: the file is a prefix of what the writer wrote (a killed
// recorder): every complete line of its complete frames, and of the
// complete zstd blocks of a frame it ends inside, is returned (Unverified
// counts those after the last checkpoint), Next stops with io.EOF and
// Truncated reports the cut. Damaged: the stored bytes
// are not what the writer wrote (a frame checksum, a checkpoint or the
// trailer that does not match, data after the end): a *DamagedError. A line
// that is not an event, a gap in seq or t going backwards is a *FormatError.
type Reader struct {
	name    string
	file    *os.File
	src     *sourceReader
	fr      *frameReader
	buf     []byte // the unread part of the chunk of content last taken from fr
	maxLine int
	window  uint64 // the zstd window cap, for error messages
	long    []byte // assembles a line that spans chunks
	longLen int    // the length of the last line assembled in long
	line    []byte // the last line returned, for Line
	lineNo  int
	d       lineDecoder

	header     Header
	headerLine []byte
	digest     *digester // format 1: the SHA-256 of the content the trailer names
	bytes      int64
	kinds      map[Kind]uint64
	nextSeq    uint64
	lastT      int64
	trailer    *Trailer
	truncated  bool
	reason     string
	unverified int // events returned that no checkpoint vouches for
	done       bool
	err        error
}

// sourceReader remembers the error of the underlying reader, so that an I/O
// error is told apart from a stream that was merely cut short, and the last
// bytes it read, so that a cut can be told from a sealed file's damage.
type sourceReader struct {
	r    io.Reader
	err  error
	n    int64 // bytes read
	ring [checkpointFrame]byte
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	if n >= len(s.ring) {
		copy(s.ring[:], p[n-len(s.ring):n])
	} else if n > 0 {
		copy(s.ring[:], s.ring[n:])
		copy(s.ring[len(s.ring)-n:], p[:n])
	}
	s.n += int64(n)
	return n, err
}

// last returns the last bytes read (up to a checkpoint's length).
func (s *sourceReader) last() []byte {
	if s.n < int64(len(s.ring)) {
		return s.ring[len(s.ring)-int(s.n):]
	}
	return s.ring[:]
}

// OpenFile opens the file at path for reading as a bundle. It refuses what
// is not a regular file (a named pipe, a device, a directory) with a
// *FormatError naming it, before opening it: a FIFO called run.zst would
// block the open, and the read, until something writes to it.
func OpenFile(path string) (*os.File, error) {
	f, err := regfile.Open(path)
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, &FormatError{Path: path, Msg: "is " + nr.What + ", not a bundle file: wireproof reads bundles from regular files only"}
	}
	return f, err
}

// Open opens the bundle at path and reads its header. Its errors, and those of
// the Reader it returns, name the file, so callers need not wrap them. A path
// that is not a regular file is refused (see OpenFile).
func Open(path string, opts *ReaderOptions) (*Reader, error) {
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	var o ReaderOptions
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = path
	}
	r, err := NewReader(f, &o)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewReader starts reading a bundle from in and reads and checks its header.
func NewReader(in io.Reader, opts *ReaderOptions) (*Reader, error) {
	var o ReaderOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	if o.MaxDecoderMemory == 0 {
		o.MaxDecoderMemory = DefaultMaxDecoderMemory
	}
	r := &Reader{
		name:    o.Name,
		src:     &sourceReader{r: in},
		maxLine: o.MaxLine,
		kinds:   make(map[Kind]uint64),
		d:       lineDecoder{skipBody: o.SkipBody},
	}
	raw := bufio.NewReaderSize(r.src, 32<<10)
	magic, err := raw.Peek(len(zstdMagic))
	switch {
	case r.src.err != nil:
		return nil, fmt.Errorf("bundle %s: %w", r.name, r.src.err)
	case len(magic) == 0:
		return nil, r.formatErr(0, "is not a wireproof bundle: the file is empty")
	case err != nil || !bytes.Equal(magic, zstdMagic):
		return nil, r.formatErr(0, "is not a wireproof bundle: not zstd data")
	}
	window := max(o.MaxDecoderMemory, zstd.MinWindowSize)
	head, _ := raw.Peek(maxFrameHeader) // a short file gives a short head
	if w, ok := frameWindow(head); ok && w > window {
		return nil, r.formatErr(0, "is a zstd stream whose window (%s) is above this reader's cap of %s (ReaderOptions.MaxDecoderMemory), "+
			"so it is not decoded: wireproof's Writer never uses one so large; decompress it and compress it again with a smaller window (zstd without --long)",
			sizeOf(w), sizeOf(window))
	}
	r.window = window
	r.fr, err = newFrameReader(r.name, raw, r.src, window)
	if err != nil {
		return nil, err
	}
	if err := r.readHeader(); err != nil {
		r.fr.close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) formatErr(line int, format string, args ...any) *FormatError {
	return &FormatError{Path: r.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (r *Reader) readHeader() error {
	line, err := r.readLine()
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			return err
		}
		if r.src.err != nil {
			return fmt.Errorf("bundle %s: %w", r.name, r.src.err)
		}
		var de *DamagedError
		if errors.As(err, &de) {
			return err
		}
		if len(line) == 0 && err == io.EOF {
			return r.formatErr(1, "no header line: the bundle is empty")
		}
		if r.fr.tailIsSeal() {
			return r.damaged("the file ends with a seal, so it was closed, but %s", r.describeCut(err, line))
		}
		return r.formatErr(1, "unreadable header: %s", r.describeCut(err, line))
	}
	r.lineNo = 1
	var ev Event
	if fe := r.parseHeader(line, &ev); fe != nil {
		return r.blame(fe)
	}
	r.fr.format = r.header.Format
	if r.header.Format == 1 {
		r.digest = newDigester()
	} else if err := r.headerFrameAlone(); err != nil {
		return err
	}
	r.count(line, ev.Kind)
	r.headerLine = slices.Clone(line)
	r.line = r.headerLine
	r.nextSeq = 1
	return nil
}

// parseHeader decodes the header line into ev and r.header and checks it.
func (r *Reader) parseHeader(line []byte, ev *Event) *FormatError {
	if err := r.d.decode(line, ev); err != nil {
		return r.formatErr(1, "unreadable header: %v", err)
	}
	if ev.Kind != KindHeader || ev.Seq != 0 || ev.T != 0 {
		return r.formatErr(1, "the first line is not a header (seq 0, t 0, kind header): got seq %d, t %d, kind %q", ev.Seq, ev.T, ev.Kind)
	}
	if ev.Body.Data == nil || ev.Body.Encoding() != EncodingJSON {
		return r.formatErr(1, "the header line has no JSON body")
	}
	if err := json.Unmarshal(ev.Body.Data, &r.header); err != nil {
		return r.formatErr(1, "unreadable header: %v", err)
	}
	switch {
	case r.header.Format > FormatVersion:
		return r.formatErr(0, "is format %d; this wireproof reads format %d or older: upgrade wireproof", r.header.Format, FormatVersion)
	case r.header.Format < 1:
		return r.formatErr(1, "the header has no format version")
	}
	return nil
}

// headerFrameAlone checks, in format 2, that the first frame ends with the
// header line: the Writer ends it there (and checkpoints it) before it
// writes an event, so a first frame that holds more (the NDJSON compressed
// again by a zstd tool, say, which makes one frame of it all) is not what
// a wireproof writer wrote, even cut short. The rest of the frame is
// decoded to its end here, which also checks its checksum; a file that
// ends inside it is left to the cut that the next read reports.
func (r *Reader) headerFrameAlone() error {
	rest, lines := int64(len(r.buf)), bytes.Count(r.buf, newline)
	n, more, err := r.fr.drain()
	rest, lines = rest+n, lines+more
	var de *DamagedError
	var ce *cutError
	switch {
	case rest > 0:
		msg := fmt.Sprintf("the first frame holds %d lines (%d bytes) after the header: not as a wireproof writer writes it, "+
			"which ends the first frame after the header line (recompressed?)", lines, rest)
		if errors.As(err, &de) {
			msg += "; also, " + de.Msg
		}
		return &DamagedError{Path: r.name, Offset: 0, Msg: msg}
	case err == nil, errors.As(err, &ce):
		return nil
	case errors.As(err, &de):
		return err
	}
	var fe *FormatError
	if errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("bundle %s: %w", r.name, err)
}

// count adds a line to the running digest and counts the trailer checks.
func (r *Reader) count(line []byte, k Kind) {
	if r.digest != nil {
		r.digest.write(line)
	}
	r.bytes += int64(len(line)) + 1
	r.kinds[k]++
}

// readLine returns the next line without its newline. A line cut short is
// returned with the error that cut it. A line within one chunk of content
// (a whole decoded frame, in format 2) is returned where it lies, uncopied;
// one that spans chunks is assembled in r.long.
func (r *Reader) readLine() ([]byte, error) {
	if i := bytes.IndexByte(r.buf, '\n'); i >= 0 {
		line := r.buf[:i]
		r.buf = r.buf[i+1:]
		if len(line) > r.maxLine {
			return nil, r.tooLong()
		}
		return line, nil
	}
	if cap(r.long) > 4<<20 && r.longLen < cap(r.long)/4 {
		// Do not keep one huge line's buffer for the rest of the stream;
		// a run of huge lines (64 MiB messages) reuses it instead of
		// growing a new one for each, which cost a garbage collection per
		// line.
		r.long = nil
	}
	r.long = append(r.long[:0], r.buf...)
	r.buf = nil
	for {
		if len(r.long) > r.maxLine {
			return nil, r.tooLong()
		}
		chunk, err := r.fr.chunk()
		if err != nil {
			return r.long, err
		}
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			if len(r.long)+i > r.maxLine {
				return nil, r.tooLong()
			}
			r.buf = chunk[i+1:]
			if len(r.long) == 0 {
				return chunk[:i], nil
			}
			r.long = append(r.long, chunk[:i]...)
			r.longLen = len(r.long)
			return r.long, nil
		}
		r.long = append(r.long, chunk...)
	}
}

func (r *Reader) tooLong() error {
	return r.blame(r.formatErr(r.lineNo+1, "line is longer than the cap of %d bytes (ReaderOptions.MaxLine)", r.maxLine))
}

// blame decides what a line that is not a valid event (fe) says about the
// bundle before it is reported. A wireproof writer writes valid lines, so
// fe means a writer's bad line only when the stored bytes it came from are
// vouched for: a format 2 frame decoded whole was (its checkpoint, or its
// checksum, was checked before a line of it was read); a line of a frame
// the stream decoder is reading (frame 1; all of a format 1 bundle) is not
// yet, so the rest of that frame is decoded (drain) and, when it turns out
// corrupt or its checksum wrong, the stored bytes were changed: a
// *DamagedError naming both. A line that no checksum can vouch for (the
// file ends inside its frame: the complete blocks of a cut frame) is
// damage too: a cut leaves complete lines intact.
func (r *Reader) blame(fe *FormatError) error {
	what := fmt.Sprintf("line %d: %s", fe.Line, fe.Msg)
	if fe.Line == 0 {
		what = "line 1, the header: the file " + fe.Msg
	}
	var err error
	switch {
	case r.fr.streaming():
		_, _, err = r.fr.drain()
	case r.fr.tailFrame && !r.fr.tailChecked:
		err = r.fr.cut
	}
	var de *DamagedError
	var ce *cutError
	switch {
	case err == nil:
		return fe
	case errors.As(err, &de):
		return &DamagedError{Path: de.Path, Offset: de.Offset, Msg: de.Msg + "; the first bad line it produced: " + what}
	case errors.As(err, &ce):
		return &DamagedError{Path: r.name, Offset: ce.off, Msg: what + "; it comes from zstd blocks that no checksum vouches for " +
			"(the file ends inside their frame), and a cut leaves complete lines as the writer wrote them: the stored bytes were changed"}
	}
	return err
}

// describeCut says how the stream ended early.
func (r *Reader) describeCut(err error, partial []byte) string {
	var b strings.Builder
	var ce *cutError
	switch {
	case err == io.EOF:
		b.WriteString("the stream ends")
	case errors.As(err, &ce) && r.fr.strict() && r.fr.frames > 1 && ce.what == "a checkpoint":
		fmt.Fprintf(&b, "the file ends inside %s that starts at stored byte %d (the recorder stopped mid-write: the frame before it is read whole)", ce.what, ce.off)
	case errors.As(err, &ce) && r.fr.strict() && r.fr.frames > 1:
		fmt.Fprintf(&b, "the file ends inside %s that starts at stored byte %d (the recorder stopped mid-write: the complete zstd blocks of that frame are read, the rest is lost)", ce.what, ce.off)
	case errors.As(err, &ce):
		b.WriteString("the zstd stream ends mid-frame (the recorder stopped before closing the bundle)")
	default:
		fmt.Fprintf(&b, "%v", err)
	}
	if len(partial) > 0 {
		fmt.Fprintf(&b, " inside a line, %d bytes of which were lost", len(partial))
	}
	return b.String()
}

// damaged is a DamagedError about the bundle as a whole.
func (r *Reader) damaged(format string, args ...any) *DamagedError {
	return &DamagedError{Path: r.name, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// damagedLine is a DamagedError about one line.
func (r *Reader) damagedLine(line int, format string, args ...any) *DamagedError {
	return &DamagedError{Path: r.name, Offset: -1, Msg: fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)}
}

// Header returns the bundle's header.
func (r *Reader) Header() Header { return r.header }

// Next reads the next event into ev, replacing all its fields.
//
// ev.Body.Data and ev.Attrs alias the Reader's buffers and are valid only until
// the next call to Next: a replayer that decodes a message at once pays no
// copy; one that keeps an event calls ev.Detach first. Strings are not shared
// with the buffers and may be kept.
//
// Next returns io.EOF after the trailer, or at the end of a stream without one
// (then Truncated is true). Any other error is a *DamagedError, a
// *FormatError or an I/O error and is returned again by later calls.
func (r *Reader) Next(ev *Event) error {
	if r.err != nil {
		return r.err
	}
	if r.done {
		return io.EOF
	}
	line, err := r.readLine()
	if err != nil {
		return r.endOfStream(err, line)
	}
	r.lineNo++
	if err := r.d.decode(line, ev); err != nil {
		return r.fail(r.blame(r.formatErr(r.lineNo, "%v", err)))
	}
	switch {
	case ev.Seq != r.nextSeq:
		return r.fail(r.blame(r.formatErr(r.lineNo, "seq %d where %d was due: the sequence has a gap or repeat", ev.Seq, r.nextSeq)))
	case ev.T < r.lastT:
		return r.fail(r.blame(r.formatErr(r.lineNo, "t %d is earlier than the previous event's t %d", ev.T, r.lastT)))
	case ev.Kind == KindHeader:
		return r.fail(r.blame(r.formatErr(r.lineNo, "a second header")))
	case ev.Kind == KindTrailer:
		if err := r.readTrailer(line, ev); err != nil {
			return r.fail(err)
		}
		return io.EOF
	}
	r.count(line, ev.Kind)
	r.nextSeq++
	r.lastT = ev.T
	r.line = line
	if r.fr.unverified {
		r.unverified++
	}
	return nil
}

func (r *Reader) fail(err error) error {
	r.err = err
	r.line = nil
	return err
}

// endOfStream handles the end of the decompressed data before a trailer.
func (r *Reader) endOfStream(err error, partial []byte) error {
	var fe *FormatError
	var de *DamagedError
	if errors.As(err, &fe) || errors.As(err, &de) {
		return r.fail(err)
	}
	if r.src.err != nil {
		return r.fail(fmt.Errorf("bundle %s: %w", r.name, r.src.err))
	}
	var ce *cutError
	cut := errors.As(err, &ce)
	switch {
	case !cut && err != io.EOF:
		return r.fail(fmt.Errorf("bundle %s: %w", r.name, err))
	case r.fr.sealed:
		return r.fail(r.damaged("the file is sealed (its last checkpoint says it was closed) but it has no trailer"))
	case cut && r.fr.tailIsSeal():
		return r.fail(r.damaged("the file ends with a seal, so it was closed, but its frames do not end there: %v", ce))
	}
	r.done = true
	r.line = nil
	r.truncated = true
	if err == io.EOF && len(partial) == 0 {
		r.reason = fmt.Sprintf("no trailer after line %d: the recording did not finish", r.lineNo)
	} else {
		r.reason = fmt.Sprintf("after line %d, %s", r.lineNo, r.describeCut(err, partial))
	}
	r.reason += r.unverifiedNote()
	return io.EOF
}

// unverifiedNote is what the truncation reason says of the events no
// checkpoint vouches for, if any.
func (r *Reader) unverifiedNote() string {
	switch {
	case r.unverified == 0:
		return ""
	case r.fr.tailChecked:
		return fmt.Sprintf("; the last %d events came after the last checkpoint, "+
			"from a whole zstd frame whose checksum checked but whose checkpoint was cut off", r.unverified)
	}
	return fmt.Sprintf("; the last %d events came after the last checkpoint, "+
		"from zstd blocks no checksum or checkpoint vouches for", r.unverified)
}

// readTrailer checks the trailer against what was read, then checks that
// nothing follows it but, in format 2, the seal.
func (r *Reader) readTrailer(line []byte, ev *Event) error {
	var tr Trailer
	if ev.Body.Encoding() != EncodingJSON {
		return r.damagedLine(r.lineNo, "the trailer has no JSON body")
	}
	if err := json.Unmarshal(ev.Body.Data, &tr); err != nil {
		return r.damagedLine(r.lineNo, "unreadable trailer: %v", err)
	}
	switch {
	case tr.Events != r.nextSeq:
		return r.damagedLine(r.lineNo, "the trailer counts %d lines before it, the bundle has %d", tr.Events, r.nextSeq)
	case tr.Bytes != r.bytes:
		return r.damagedLine(r.lineNo, "the trailer counts %d bytes before it, the bundle has %d", tr.Bytes, r.bytes)
	case !maps.Equal(tr.Kinds, r.kinds):
		return r.damagedLine(r.lineNo, "the trailer's counts per kind %v do not match the content's %v", tr.Kinds, r.kinds)
	}
	if r.digest != nil {
		if digest := "sha256:" + hex.EncodeToString(r.digest.sum()); tr.Digest != digest {
			return r.damagedLine(r.lineNo, "the trailer digest %s does not match the content's %s", tr.Digest, digest)
		}
	}
	r.trailer = &tr
	r.line = slices.Clone(line)
	r.done = true
	// Nothing may follow the trailer but the end of its zstd frame and, in
	// format 2, the seal.
	rest, err := r.readLine()
	switch {
	case len(rest) > 0 || err == nil:
		return r.damagedLine(r.lineNo+1, "data after the trailer")
	case err == io.EOF:
		if r.fr.strict() && !r.fr.sealed {
			if !r.fr.sinceCheck {
				return r.damaged("the checkpoint after the trailer is not the seal")
			}
			// Only a cut leaves this: a changed byte leaves the seal's
			// bytes in place, where they are read as what they have become.
			r.truncated = true
			r.reason = "the file ends after the trailer, before the seal (the checkpoint that ends a closed bundle)" + r.unverifiedNote()
		}
		return nil
	case r.src.err != nil:
		return fmt.Errorf("bundle %s: %w", r.name, r.src.err)
	}
	var fe *FormatError
	var de *DamagedError
	var ce *cutError
	if errors.As(err, &fe) || errors.As(err, &de) {
		return err
	}
	if !errors.As(err, &ce) || r.fr.tailIsSeal() {
		return r.damaged("after the trailer, %s", r.describeCut(err, nil))
	}
	// The file was cut while the writer ended it: in format 1 the frame's
	// checksum is missing, in format 2 part of the seal. The trailer is
	// whole and verified.
	r.truncated = true
	r.reason = "after the trailer, " + r.describeCut(err, nil) + r.unverifiedNote()
	return nil
}

// Truncated reports whether the file was cut short: it ended without a
// trailer, or after the trailer before the end of its frame or its seal. A
// changed byte is never reported so (that is a *DamagedError). It is
// meaningful once Next has returned io.EOF.
func (r *Reader) Truncated() bool { return r.truncated }

// TruncatedReason says where and how the stream was cut, or "" if it was not.
func (r *Reader) TruncatedReason() string { return r.reason }

// Unverified returns how many of the events Next returned came after the
// last checkpoint: those of a truncated bundle's last frame, read from its
// complete zstd blocks (the frame a killed recorder had not ended), or
// from a whole frame whose checkpoint was cut off. They decode, but no
// checkpoint (and, for an unfinished frame, no checksum) vouches for them.
// It is 0 for a verified bundle, whose every byte is checked.
func (r *Reader) Unverified() int { return r.unverified }

// Trailer returns the verified trailer, or nil if none has been read.
func (r *Reader) Trailer() *Trailer { return r.trailer }

// Line returns the raw bytes (without newline) of the last line read: the
// header line after NewReader, the line of the event Next last returned, or the
// trailer line once Next has returned io.EOF at a trailer; nil after a
// truncated end. Like Body.Data it is valid until the next call to Next. It
// lets a tool copy events out in the bundle's own encoding.
func (r *Reader) Line() []byte { return r.line }

// Digest returns what vouches for the bundle once Next has returned io.EOF
// at its trailer, "" before or without one: for format 2, "sha256:" and the
// hex SHA-256 of the stored file up to its seal (the file without its last
// 57 bytes: `head -c -57 run.zst | sha256sum`); for format 1, the trailer's
// digest of the decompressed content.
func (r *Reader) Digest() string {
	switch {
	case r.trailer == nil:
		return ""
	case r.fr.sealDigest != nil:
		return "sha256:" + hex.EncodeToString(r.fr.sealDigest)
	}
	return r.trailer.Digest
}

// Close releases the decoder and, for a Reader from Open, closes the file.
func (r *Reader) Close() error {
	if r.digest != nil {
		r.digest.wait()
	}
	r.fr.close()
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}

// maxFrameHeader is the longest zstd frame header: magic, descriptor, window
// descriptor, dictionary id and frame content size.
const maxFrameHeader = 4 + 1 + 1 + 4 + 8

// frameWindow reads the window size a zstd frame header declares (RFC 8878
// section 3.1.1.1): the window descriptor, or for a single-segment frame its
// content size. ok is false when the header is too short to tell.
func frameWindow(h []byte) (window uint64, ok bool) {
	if len(h) < 6 {
		return 0, false
	}
	fhd := h[4]
	if fhd&0x20 == 0 { // not single-segment: a window descriptor follows
		exp, mantissa := uint(h[5]>>3), uint64(h[5]&7)
		base := uint64(1) << (10 + exp)
		return base + base/8*mantissa, true
	}
	off := 5 + [4]int{0, 1, 2, 4}[fhd&3] // after the dictionary id
	n := [4]int{1, 2, 4, 8}[fhd>>6]
	if len(h) < off+n {
		return 0, false
	}
	for i := n - 1; i >= 0; i-- {
		window = window<<8 | uint64(h[off+i])
	}
	if n == 2 {
		window += 256
	}
	return window, true
}

// sizeOf spells a byte count in the largest binary unit that divides it.
func sizeOf(n uint64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
