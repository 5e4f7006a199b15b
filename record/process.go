package record

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/redact"
)

// Defaults of ProcessOptions.
const (
	DefaultReadyTimeout = 60 * time.Second
	DefaultStopGrace    = 10 * time.Second
)

// drainGrace bounds how long output is still read after the process and the
// rest of its group are dead. Only a process that left the group (setsid) and
// kept the pipes open can make it expire; the pipes are then closed on it.
const drainGrace = 5 * time.Second

// lastLinesKept is how many output lines an ExitedError or ReadyTimeoutError
// carries, so a failed start explains itself.
const lastLinesKept = 20

// ProcessOptions says how to start and supervise a server process. A nil
// *ProcessOptions is not valid: Argv is required.
type ProcessOptions struct {
	Name string   // conn id in events, default "server"
	Argv []string // program and args
	Dir  string
	Env  []string // nil: inherit

	// ExtraFile, if non-nil, is written to the child's fd 3 through a pipe
	// which is then closed (the bootstrap JSON, t3.Bootstrap). Windows has
	// no fd 3 to give (os/exec's ExtraFiles): there StartProcess fails with
	// an error that wraps syscall.EWINDOWS.
	ExtraFile []byte

	// ReadyLine: readiness is the first stdout or stderr line containing it
	// ("startup phase: complete"). Empty means ready as soon as started.
	ReadyLine    string
	ReadyTimeout time.Duration // from the start; default 60s

	// StopGrace is how long Stop waits after SIGTERM before SIGKILL (default
	// 10s). The rest of the process group is then killed as well.
	StopGrace time.Duration

	// Redact lists strings replaced by [REDACTED] in log lines (and argv)
	// before they are emitted: the bootstrap token. When the Emitter is a
	// *Recorder they are added to its secrets (AddSecret), so they are
	// redacted in every event and spelling it redacts.
	Redact []string

	// MaxLine caps one proc.log event; longer lines are split, never inside
	// a secret (of Redact, or one the Recorder knows or learns, in any
	// spelling, or a token field): the tail of a piece that may begin one
	// goes to the start of the next, so a piece may be longer than MaxLine
	// by that tail. Default MaxLineBytes.
	MaxLine int
}

// ExitedError is returned by Ready when the process exited before printing
// its ready line.
type ExitedError struct {
	Name      string
	Code      int    // exit status, -1 when killed by a signal
	Signal    string // the signal that killed it ("SIGKILL"), if any
	LastLines []string
}

func (e *ExitedError) Error() string {
	how := fmt.Sprintf("exit code %d", e.Code)
	if e.Signal != "" {
		how = "killed by " + e.Signal
	}
	return fmt.Sprintf("record: process %q exited before it was ready (%s)%s", e.Name, how, tail(e.LastLines))
}

// ReadyTimeoutError is returned by Ready when the ready line did not come
// within ReadyTimeout. The process is still running; the caller stops it.
type ReadyTimeoutError struct {
	Name      string
	Timeout   time.Duration
	ReadyLine string
	LastLines []string
}

func (e *ReadyTimeoutError) Error() string {
	return fmt.Sprintf("record: process %q did not print %q within %v%s", e.Name, e.ReadyLine, e.Timeout, tail(e.LastLines))
}

func tail(lines []string) string {
	if len(lines) == 0 {
		return "; it printed nothing"
	}
	return "; last output:\n\t" + strings.Join(lines, "\n\t")
}

// ErrNotExited is returned by ExitStatus while the process is running.
var ErrNotExited = errors.New("record: process has not exited")

// Process is a supervised server process running in its own process group.
// Every line of its stdout and stderr is emitted as proc.log; its start,
// readiness, the signals sent to it and its exit are emitted as proc.start,
// proc.ready, proc.signal and proc.exit. proc.exit is always its last event:
// it is emitted only once both output pipes are drained.
//
// When the process exits, for whatever reason, anything left in its process
// group is killed with SIGKILL (recorded as a proc.signal with
// {"group":true}): a survivor holding the output pipes would otherwise keep
// the process from ever being done, and the server's helpers (provider
// processes) must not outlive it.
//
// Nor do they outlive this process, even when it is killed with SIGKILL and
// cannot stop them: the leader gets SIGKILL from the kernel when its parent
// dies (StartTied), and a watchdog (a shell blocked on a pipe only this
// process holds) kills the rest of the group when that pipe closes.
//
// On Windows the group is a job object the process is put in before it
// runs (see Group): what it starts is in the job too, and the kernel kills
// the job when this process ends. SIGTERM is sent as a CTRL_BREAK_EVENT to
// the process's console process group, or, when this process has no console
// the process shares, replaced by termination; a killed process exits with
// code 1, as Windows has no signal to report.
//
// All methods are safe for concurrent use.
type Process struct {
	em    Emitter
	name  string
	opts  ProcessOptions
	cmd   *exec.Cmd
	wait  func() error // cmd.Wait (on unix on the goroutine that started it: StartTied)
	group *procGroup   // ends the process's group: procgroup_unix.go, procgroup_windows.go
	start time.Time
	red   *redact.Redactor // cuts the pieces of a line longer than MaxLine

	ready     chan struct{} // closed when the ready line was seen
	readyOnce sync.Once
	exited    chan struct{} // closed when the process has been reaped
	done      chan struct{} // closed after proc.exit was emitted

	stopping atomic.Bool
	stopOnce sync.Once
	stopErr  error

	mu          sync.Mutex // guards the fields below and orders signal events before proc.exit
	lastLines   []string
	exitEmitted bool
	code        int
	signal      string
	waitErr     error
	emitErr     error
}

// StartProcess starts opts.Argv in its own process group and supervises it.
// ctx bounds the start only: the process runs until it exits or Stop is called,
// and the caller must call Stop (or wait for Done) so nothing is left behind.
func StartProcess(ctx context.Context, em Emitter, opts *ProcessOptions) (*Process, error) {
	if em == nil {
		return nil, errors.New("record: StartProcess needs an Emitter")
	}
	if opts == nil || len(opts.Argv) == 0 || opts.Argv[0] == "" {
		return nil, errors.New("record: StartProcess needs ProcessOptions with a program in Argv")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := &Process{
		em:     em,
		opts:   *opts,
		ready:  make(chan struct{}),
		exited: make(chan struct{}),
		done:   make(chan struct{}),
	}
	p.opts.Argv = append([]string(nil), opts.Argv...)
	p.name = cmp.Or(opts.Name, "server")
	// A line longer than MaxLine is cut where no secret the recording
	// redacts can straddle the cut: the Recorder's secrets, which learn
	// token fields, with Redact among them; or, with another Emitter, which
	// redacts nothing, Redact's alone.
	if rec, ok := em.(*Recorder); ok {
		for _, s := range opts.Redact {
			rec.AddSecret(s)
		}
		p.red = rec.red
	} else {
		p.red = redact.New(opts.Redact, []string{})
	}
	if p.opts.ReadyTimeout <= 0 {
		p.opts.ReadyTimeout = DefaultReadyTimeout
	}
	if p.opts.StopGrace <= 0 {
		p.opts.StopGrace = DefaultStopGrace
	}

	cmd := exec.Command(p.opts.Argv[0], p.opts.Argv[1:]...)
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env

	// Our own pipes rather than cmd.StdoutPipe: Wait must not close them,
	// because the output is read to its end after the process is reaped.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("record: stdout pipe for %q: %w", p.name, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(outR, outW)
		return nil, fmt.Errorf("record: stderr pipe for %q: %w", p.name, err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	childEnds := []*os.File{outW, errW}
	var extraW *os.File
	if opts.ExtraFile != nil {
		var extraR *os.File
		extraR, extraW, err = os.Pipe()
		if err != nil {
			closeAll(outR, outW, errR, errW)
			return nil, fmt.Errorf("record: fd 3 pipe for %q: %w", p.name, err)
		}
		cmd.ExtraFiles = []*os.File{extraR}
		childEnds = append(childEnds, extraR)
	}
	// The server dies with us even if we are SIGKILLed: the kernel kills the
	// leader, the watchdog the rest of its group (on Windows the kernel
	// kills the job).
	wait, group, err := startProcGroup(cmd)
	if err != nil {
		closeAll(childEnds...)
		closeAll(outR, errR, extraW)
		return nil, fmt.Errorf("record: starting %q (%s): %w", p.name, p.opts.Argv[0], err)
	}
	// The child holds its own copies; ours must go so EOF can come.
	closeAll(childEnds...)
	p.cmd, p.wait, p.group = cmd, wait, group
	p.start = time.Now()

	attrs, _ := json.Marshal(struct {
		Argv []string `json:"argv"`
		Pid  int      `json:"pid"`
		Dir  string   `json:"dir,omitempty"`
	}{p.redactAll(p.opts.Argv), cmd.Process.Pid, opts.Dir})
	p.emit(&bundle.Event{Kind: bundle.KindProcStart, Conn: p.name, Attrs: attrs})
	if p.opts.ReadyLine == "" {
		p.markReady(nil)
	}

	var writers sync.WaitGroup
	if extraW != nil {
		writers.Go(func() {
			// A child that never reads fd 3 cannot block us: the write ends
			// with EPIPE once the child and its group are gone.
			extraW.Write(opts.ExtraFile)
			extraW.Close()
		})
	}
	var readers sync.WaitGroup
	readers.Go(func() { p.readLines(outR, bundle.TypeStdout) })
	readers.Go(func() { p.readLines(errR, bundle.TypeStderr) })
	go p.supervise(&readers, &writers, outR, errR, extraW)
	return p, nil
}

// supervise reaps the process, kills what is left of its group, waits for the
// output to drain and emits proc.exit.
func (p *Process) supervise(readers, writers *sync.WaitGroup, outR, errR, extraW *os.File) {
	err := p.wait()
	code, sig := exitCode(p.cmd.ProcessState)
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		err = nil // the status says it all
	}
	p.mu.Lock()
	p.code, p.signal, p.waitErr = code, sig, err
	close(p.exited)
	p.mu.Unlock()

	p.killGroup()
	p.group.release() // the group is dead: nothing left for the watchdog to do

	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	var drainErr error
	select {
	case <-drained:
	case <-time.After(drainGrace):
		// Something outside the group still holds the pipes.
		closeAll(outR, errR)
		<-drained
		drainErr = fmt.Errorf("output still open %v after exit; stopped reading", drainGrace)
	}
	// Nobody reads fd 3 any more; unblock a writer stuck on a full pipe.
	closeAll(extraW)
	writers.Wait()

	p.mu.Lock()
	defer p.mu.Unlock()
	ev := &bundle.Event{Kind: bundle.KindProcExit, Conn: p.name, Code: code, Name: sig}
	if e := errors.Join(err, drainErr); e != nil {
		ev.Err = e.Error()
	}
	p.emitLocked(ev)
	p.exitEmitted = true
	close(p.done)
}

// killGroup sends SIGKILL to whatever is left of the process group, and
// records it if anything was.
func (p *Process) killGroup() {
	if !p.group.alive() {
		return // nobody left
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.emitLocked(&bundle.Event{Kind: bundle.KindProcSignal, Conn: p.name, Name: "SIGKILL",
		Attrs: json.RawMessage(`{"group":true}`)})
	p.group.kill()
}

// readLines emits every line of one output stream as proc.log, and the ready
// line as proc.ready, until EOF.
func (p *Process) readLines(r *os.File, typ string) {
	defer r.Close()
	s := newLineSplitter(p.opts.MaxLine, p.red, func(line []byte, end lineEnd) {
		raw := string(line)
		text := p.redact(raw)
		p.mu.Lock()
		if len(p.lastLines) == lastLinesKept {
			p.lastLines = p.lastLines[1:]
		}
		p.lastLines = append(p.lastLines, text)
		p.mu.Unlock()
		p.emit(&bundle.Event{Kind: bundle.KindProcLog, Conn: p.name, Type: typ,
			Body: bundle.Text([]byte(text)), Attrs: end.attrs()})
		if p.opts.ReadyLine != "" && strings.Contains(raw, p.opts.ReadyLine) {
			p.markReady([]byte(text))
		}
	})
	io.Copy(s, r)
	s.Flush()
}

// markReady emits proc.ready once and releases Ready.
func (p *Process) markReady(line []byte) {
	p.readyOnce.Do(func() {
		ev := &bundle.Event{Kind: bundle.KindProcReady, Conn: p.name}
		if line != nil {
			ev.Body = bundle.Text(line)
		}
		p.emit(ev)
		close(p.ready)
	})
}

// Ready waits until the process printed its ready line. It returns
// *ExitedError if the process exited first, *ReadyTimeoutError when
// ReadyTimeout (counted from the start) passed, or ctx's error. Once ready,
// it returns nil, even after the process exited.
func (p *Process) Ready(ctx context.Context) error {
	timer := time.NewTimer(time.Until(p.start.Add(p.opts.ReadyTimeout)))
	defer timer.Stop()
	select {
	case <-p.ready:
		return nil
	default:
	}
	select {
	case <-p.ready:
		return nil
	case <-p.done:
		select {
		case <-p.ready: // the ready line was in the last output
			return nil
		default:
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		return &ExitedError{Name: p.name, Code: p.code, Signal: p.signal, LastLines: p.lastLinesLocked()}
	case <-timer.C:
		p.mu.Lock()
		defer p.mu.Unlock()
		return &ReadyTimeoutError{Name: p.name, Timeout: p.opts.ReadyTimeout, ReadyLine: p.opts.ReadyLine,
			LastLines: p.lastLinesLocked()}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LastLines returns the last lines the process printed (stdout and stderr,
// redacted), as ExitedError and ReadyTimeoutError carry them: what a caller
// whose own deadline ended the wait for the ready line shows of it.
func (p *Process) LastLines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastLinesLocked()
}

func (p *Process) lastLinesLocked() []string {
	return append([]string(nil), p.lastLines...)
}

// Done is closed when the process has exited, its group is gone and its
// output is drained: proc.exit has been emitted.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitStatus reports how the process ended: its exit code (-1 when killed by
// a signal) and the signal's name. err is ErrNotExited until Done is closed,
// or an error from waiting for the process or reading its output.
func (p *Process) ExitStatus() (code int, signal string, err error) {
	select {
	case <-p.done:
	default:
		return 0, "", ErrNotExited
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.code, p.signal, p.waitErr
}

// Pid returns the process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stopping reports whether Stop was called, so an exit is expected and not a
// crash.
func (p *Process) Stopping() bool { return p.stopping.Load() }

// Stop ends the process as the reference verifier does: SIGTERM, SIGKILL
// after StopGrace (at once if ctx is done first), and SIGKILL to the whole
// process group once it exited. It returns when Done is closed. Stop is
// idempotent, safe after the process exited by itself, and concurrent calls
// all wait for the one stop. It returns the first error the Emitter reported
// for this process's events, since evidence was then lost.
func (p *Process) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		p.stopping.Store(true)
		p.signalLeader(syscall.SIGTERM)
		grace := time.NewTimer(p.opts.StopGrace)
		defer grace.Stop()
		select {
		case <-p.exited:
		case <-grace.C:
			p.signalLeader(syscall.SIGKILL)
		case <-ctx.Done():
			p.signalLeader(syscall.SIGKILL)
		}
		<-p.done
		p.mu.Lock()
		p.stopErr = p.emitErr
		p.mu.Unlock()
	})
	return p.stopErr
}

// signalLeader records sig and sends it to the process, unless it is already
// reaped. The event comes first so the process's reaction follows it in the
// bundle, and the lock keeps it before proc.exit.
func (p *Process) signalLeader(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exited:
		return
	default:
	}
	p.emitLocked(&bundle.Event{Kind: bundle.KindProcSignal, Conn: p.name, Name: signalName(sig)})
	sendSignal(p.cmd.Process, sig)
}

func (p *Process) emit(ev *bundle.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.emitLocked(ev)
}

func (p *Process) emitLocked(ev *bundle.Event) {
	if _, err := p.em.Emit(ev); err != nil && p.emitErr == nil {
		p.emitErr = fmt.Errorf("record: emitting %s of %q: %w", ev.Kind, p.name, err)
	}
}

func (p *Process) redact(s string) string {
	for _, secret := range p.opts.Redact {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[REDACTED]")
		}
	}
	return s
}

func (p *Process) redactAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p.redact(s)
	}
	return out
}

// exitCode turns a process state into the exit code and signal name of
// proc.exit.
func exitCode(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, signalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// signalNames spells the signals a supervised process is sent or dies of the
// way the events do; unixSignalNames those that only unix has.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM",
	syscall.SIGTERM: "SIGTERM",
}

// SignalName is a signal's name as a proc.exit event spells it ("SIGTERM").
func SignalName(s syscall.Signal) string { return signalName(s) }

func signalName(s syscall.Signal) string {
	if name, ok := signalNames[s]; ok {
		return name
	}
	if name, ok := unixSignalNames[s]; ok {
		return name
	}
	return fmt.Sprintf("SIG%d", int(s))
}
