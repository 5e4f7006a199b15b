package record

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/redact"
)

// tapWaitDelay is how long TapCommand lets the command's stdio copying run on
// after the command exited, when the caller set no cmd.WaitDelay: an
// interactive stdin would otherwise hold Wait until its next line.
const tapWaitDelay = 2 * time.Second

// tap turns one direction of an NDJSON stream into stdio.line events. Each
// complete line is one event; a line longer than MaxLineBytes is split into
// events marked {"partial":true}; a last line without newline is flushed at
// the end marked {"noNewline":true}. Lines that are JSON are embedded as JSON
// by the bundle's payload rules.
type tap struct {
	em   Emitter
	name string
	dir  bundle.Dir

	mu      sync.Mutex // serialises bytes through the splitter, and guards emitErr
	split   *lineSplitter
	deltas  *redact.Deltas    // the lines, a text streamed as deltas redacted joined
	held    []json.RawMessage // the attrs of the lines deltas holds, in order
	ended   bool
	emitErr error
}

func newTap(em Emitter, name string, dir bundle.Dir) *tap {
	t := &tap{em: em, name: name, dir: dir}
	// A line longer than MaxLineBytes is recorded in pieces: when recording
	// through a Recorder, they are cut so that no secret is split between
	// two pieces (the tail that could begin one moves on to the next piece).
	var red *redact.Redactor
	if rec, ok := em.(*Recorder); ok {
		red = rec.red
	}
	t.split = newLineSplitter(MaxLineBytes, red, t.emitLine)
	return t
}

// emitLine is called with t.mu held.
func (t *tap) emitLine(line []byte, end lineEnd) {
	if rec, ok := t.em.(*Recorder); ok {
		// A text streamed as deltas over lines (Codex's
		// item/agentMessage/delta, the Claude CLI's stream_event) is
		// redacted joined: a line whose text may begin a secret waits, with
		// the lines behind it, until the next decides.
		if t.deltas == nil {
			t.deltas = redact.NewDeltas(rec.red)
		}
		t.held = append(t.held, end.attrs())
		t.emitHeld(t.deltas.Next(slices.Clone(line)))
		return
	}
	t.emitOne(slices.Clone(line), end.attrs())
}

// emitHeld records the lines deltas released, each with its attrs. t.mu is
// held.
func (t *tap) emitHeld(lines [][]byte) {
	for _, l := range lines {
		attrs := t.held[0]
		t.held = t.held[1:]
		t.emitOne(l, attrs)
	}
}

// emitOne records one line. t.mu is held.
func (t *tap) emitOne(line []byte, attrs json.RawMessage) {
	ev := &bundle.Event{Kind: bundle.KindStdioLine, Conn: t.name, Dir: t.dir,
		Body: bundle.Text(line), Attrs: attrs}
	if _, err := t.em.Emit(ev); err != nil && t.emitErr == nil {
		t.emitErr = fmt.Errorf("record: emitting a stdio line of %q: %w", t.name, err)
	}
}

// observe feeds bytes that crossed the tap.
func (t *tap) observe(p []byte) {
	if len(p) > 0 {
		t.split.Write(p)
	}
}

// end flushes an unfinished last line and the lines held, once.
func (t *tap) end() {
	if !t.ended {
		t.ended = true
		t.split.Flush()
		if t.deltas != nil {
			t.emitHeld(t.deltas.Flush(true))
		}
	}
}

func (t *tap) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.emitErr
}

// tapReader is the reader TapReader returns.
type tapReader struct {
	r io.Reader
	t *tap
}

// TapReader returns a reader that passes the bytes of r through unchanged and
// emits one stdio.line event (conn name, direction dir) per line read. A
// partial line is buffered, up to MaxLineBytes, until its newline arrives; the
// remainder is flushed when r returns an error (io.EOF included).
//
// Reads are serialised; like any reader it is meant for one goroutine at a
// time.
func TapReader(em Emitter, name string, dir bundle.Dir, r io.Reader) io.Reader {
	return &tapReader{r: r, t: newTap(em, name, dir)}
}

func (tr *tapReader) Read(p []byte) (int, error) {
	tr.t.mu.Lock()
	defer tr.t.mu.Unlock()
	n, err := tr.r.Read(p)
	tr.t.observe(p[:n])
	if err != nil {
		tr.t.end()
	}
	return n, err
}

// tapWriter is the writer TapWriter returns.
type tapWriter struct {
	w io.Writer
	t *tap
	// first: the bytes are recorded before they are passed on
	// (TapCommand's stdout), so that whatever answers a line is recorded
	// after it.
	first bool
}

// TapWriter returns a writer that writes through to w and emits one
// stdio.line event (conn name, direction dir) per line written; it is also an
// io.Closer. Only bytes w accepted are recorded. Close flushes an unfinished
// last line and then closes w if w is an io.Closer (so a child's stdin sees
// EOF).
//
// Writes are serialised, so goroutines sharing the writer (JSON-RPC callers
// sharing a stdin) each get their lines recorded whole, provided each writes
// whole lines in one Write.
func TapWriter(em Emitter, name string, dir bundle.Dir, w io.Writer) io.WriteCloser {
	return &tapWriter{w: w, t: newTap(em, name, dir)}
}

func (tw *tapWriter) Write(p []byte) (int, error) {
	tw.t.mu.Lock()
	defer tw.t.mu.Unlock()
	if tw.first {
		tw.t.observe(p)
		return tw.w.Write(p)
	}
	n, err := tw.w.Write(p)
	tw.t.observe(p[:n])
	return n, err
}

// Close flushes the unfinished last line, then closes the underlying writer
// if it is an io.Closer.
func (tw *tapWriter) Close() error {
	tw.flush()
	if c, ok := tw.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (tw *tapWriter) flush() {
	tw.t.mu.Lock()
	defer tw.t.mu.Unlock()
	tw.t.end()
}

// TapCommand runs cmd with its stdin and stdout tapped as conn name: what
// cmd.Stdin supplies is recorded as client-to-server lines (the command is
// the server of a stdio protocol, as a provider process speaking JSON-RPC over
// NDJSON is), what the command writes to stdout as server-to-client lines. A
// nil cmd.Stdin leaves stdin empty and untapped; a nil cmd.Stdout is tapped
// and discarded. Stderr is left as the caller set it.
//
// It returns when the command has exited and its output is recorded: the
// command's error, ctx's error if ctx ended it (it is killed), and the first
// error the Emitter reported. If cmd.WaitDelay is zero it is set to two
// seconds, so a stdin that never ends cannot hold the return.
//
// The command runs as a Group (cmd.SysProcAttr is replaced): what it starts
// is killed with it, when it exits, when ctx ends, and when this process
// dies, even by SIGKILL.
func TapCommand(ctx context.Context, em Emitter, name string, cmd *exec.Cmd) error {
	if em == nil || cmd == nil {
		return errors.New("record: TapCommand needs an Emitter and a command")
	}
	if cmd.Process != nil {
		return fmt.Errorf("record: TapCommand of %q: command already started", name)
	}
	var in *tapReader
	if cmd.Stdin != nil {
		in = TapReader(em, name, bundle.DirClientToServer, cmd.Stdin).(*tapReader)
		cmd.Stdin = in
	}
	// The command's lines are recorded before the caller's stdout gets
	// them: a peer that answers one at once (a request of the command's)
	// has its answer recorded after it, as TapReader records that answer
	// before the command reads it.
	out := TapWriter(em, name, bundle.DirServerToClient, cmp.Or[io.Writer](cmd.Stdout, io.Discard)).(*tapWriter)
	out.first = true
	cmd.Stdout = out
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = tapWaitDelay
	}
	// The command and what it starts die with this process, even on
	// SIGKILL, and what it leaves running when it exits is killed (Group).
	g, err := StartGroup(cmd)
	if err != nil {
		return fmt.Errorf("record: starting %q: %w", name, err)
	}
	stopWatch := context.AfterFunc(ctx, func() { g.Signal(syscall.SIGKILL) })
	err = g.Wait()
	killed := !stopWatch()

	// Wait has stopped the copying; flush what it left unfinished.
	out.flush()
	errs := []error{err, out.t.err()}
	// A stdin copy cut off by WaitDelay may still be blocked reading the
	// caller's reader, holding the tap; its line is flushed when that read
	// returns.
	if in != nil && in.t.mu.TryLock() {
		in.t.end()
		in.t.mu.Unlock()
		errs = append(errs, in.t.err())
	}
	if killed {
		errs = append(errs, fmt.Errorf("record: %q killed: %w", name, context.Cause(ctx)))
	}
	return errors.Join(errs...)
}
