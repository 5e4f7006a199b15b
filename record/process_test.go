//go:build unix

package record

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

func ofKind(kinds ...bundle.Kind) func(*bundle.Event) bool {
	return func(ev *bundle.Event) bool {
		for _, k := range kinds {
			if ev.Kind == k {
				return true
			}
		}
		return false
	}
}

func TestProcessLogsReadyAndExit(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	p := startHelper(t, &log, "lines", &ProcessOptions{
		Name:      "srv",
		Argv:      []string{"--token", "SECRET123"},
		ReadyLine: readyLine,
		Redact:    []string{"SECRET123"},
		MaxLine:   24,
	})
	if err := p.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	waitClosed(t, p.Done(), "exit")
	code, sig, err := p.ExitStatus()
	if diff := cmp.Diff([]any{0, "", nil}, []any{code, sig, err}); diff != "" {
		t.Errorf("ExitStatus (-want +got):\n%s", diff)
	}
	if p.Stopping() {
		t.Error("Stopping() is true, but Stop was never called")
	}

	evs := log.events()
	if evs[0].Kind != bundle.KindProcStart {
		t.Fatalf("first event is %s, want proc.start", evs[0].Kind)
	}
	wantAttrs := fmt.Sprintf(`{"argv":[%q,"-test.run=^$","--token","[REDACTED]"],"pid":%d}`, testkit.HelperArgv()[0], p.Pid())
	if diff := cmp.Diff(wantAttrs, string(evs[0].Attrs)); diff != "" {
		t.Errorf("proc.start attrs (-want +got):\n%s", diff)
	}
	last := view(evs[len(evs)-1])
	if diff := cmp.Diff(seen{Kind: bundle.KindProcExit, Conn: "srv"}, last); diff != "" {
		t.Errorf("last event (-want +got):\n%s", diff)
	}

	stream := func(typ string) func(*bundle.Event) bool {
		return func(ev *bundle.Event) bool { return ev.Kind == bundle.KindProcLog && ev.Type == typ }
	}
	logLine := func(typ, body, attrs string) seen {
		return seen{Kind: bundle.KindProcLog, Conn: "srv", Type: typ, Body: body, Enc: bundle.EncodingText, Attrs: attrs}
	}
	wantOut := []seen{
		logLine("stdout", "out 1", ""),
		logLine("stdout", "token=[REDACTED] in a log", ""),
		logLine("stdout", strings.Repeat("x", 24), `{"partial":true}`),
		logLine("stdout", strings.Repeat("x", 16), ""),
		logLine("stdout", "tail without newline", `{"noNewline":true}`),
	}
	if diff := cmp.Diff(wantOut, views(evs, stream("stdout"))); diff != "" {
		t.Errorf("stdout lines (-want +got):\n%s", diff)
	}
	wantErr := []seen{logLine("stderr", "err 1", ""), logLine("stderr", readyLine, "")}
	if diff := cmp.Diff(wantErr, views(evs, stream("stderr"))); diff != "" {
		t.Errorf("stderr lines (-want +got):\n%s", diff)
	}
	wantReady := []seen{{Kind: bundle.KindProcReady, Conn: "srv", Body: readyLine, Enc: bundle.EncodingText}}
	if diff := cmp.Diff(wantReady, views(evs, ofKind(bundle.KindProcReady))); diff != "" {
		t.Errorf("proc.ready (-want +got):\n%s", diff)
	}
	// The ready event follows its log line.
	readyAt, lineAt := -1, -1
	for i, ev := range evs {
		switch {
		case ev.Kind == bundle.KindProcReady:
			readyAt = i
		case ev.Kind == bundle.KindProcLog && string(ev.Body.Data) == readyLine:
			lineAt = i
		}
	}
	if readyAt < lineAt {
		t.Errorf("proc.ready at %d comes before its log line at %d", readyAt, lineAt)
	}
}

func TestProcessExtraFile(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	bootstrap := `{"mode":"desktop","desktopBootstrapToken":"tok-123"}`
	p := startHelper(t, &log, "fd3", &ProcessOptions{
		ExtraFile: []byte(bootstrap),
		ReadyLine: readyLine,
		Redact:    []string{"tok-123"},
	})
	if err := p.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	waitClosed(t, p.Done(), "exit")
	want := []seen{
		{Kind: bundle.KindProcLog, Conn: "server", Type: "stdout", Enc: bundle.EncodingText,
			Body: `fd3: {"mode":"desktop","desktopBootstrapToken":"[REDACTED]"}`},
		{Kind: bundle.KindProcLog, Conn: "server", Type: "stdout", Enc: bundle.EncodingText, Body: readyLine},
	}
	if diff := cmp.Diff(want, views(log.events(), ofKind(bundle.KindProcLog))); diff != "" {
		t.Errorf("log lines (-want +got):\n%s", diff)
	}
}

// signalsAndExit keeps the events that tell how a process was stopped.
var signalsAndExit = ofKind(bundle.KindProcSignal, bundle.KindProcExit)

func TestProcessStopEscalatesToSIGKILL(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	p := startHelper(t, &log, "ignore-term", &ProcessOptions{ReadyLine: readyLine, StopGrace: 50 * time.Millisecond})
	if err := p.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if err := p.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !p.Stopping() {
		t.Error("Stopping() is false after Stop")
	}
	want := []seen{
		{Kind: bundle.KindProcSignal, Conn: "server", Name: "SIGTERM"},
		{Kind: bundle.KindProcSignal, Conn: "server", Name: "SIGKILL"},
		{Kind: bundle.KindProcExit, Conn: "server", Code: -1, Name: "SIGKILL"},
	}
	if diff := cmp.Diff(want, views(log.events(), signalsAndExit)); diff != "" {
		t.Errorf("stop events (-want +got):\n%s", diff)
	}
	code, sig, err := p.ExitStatus()
	if diff := cmp.Diff([]any{-1, "SIGKILL", nil}, []any{code, sig, err}); diff != "" {
		t.Errorf("ExitStatus (-want +got):\n%s", diff)
	}
}

func TestProcessStopKillsGroup(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	p := startHelper(t, &log, "grandchild", nil)
	if err := p.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	grandchild := 0
	for _, ev := range log.events() {
		if s, ok := strings.CutPrefix(string(ev.Body.Data), "grandchild "); ok && ev.Kind == bundle.KindProcLog {
			grandchild, _ = strconv.Atoi(s)
		}
	}
	if grandchild == 0 {
		t.Fatal("the helper did not report its grandchild")
	}
	// The grandchild holds stdout open: Stop returns only because the group
	// kill ended it.
	if err := p.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	want := []seen{
		{Kind: bundle.KindProcSignal, Conn: "server", Name: "SIGTERM"},
		{Kind: bundle.KindProcSignal, Conn: "server", Name: "SIGKILL", Attrs: `{"group":true}`},
		{Kind: bundle.KindProcExit, Conn: "server"},
	}
	if diff := cmp.Diff(want, views(log.events(), signalsAndExit)); diff != "" {
		t.Errorf("stop events (-want +got):\n%s", diff)
	}
	// Its pipe closed as it died; /proc may lag a moment behind.
	waitFor(t, fmt.Sprintf("death of grandchild %d after the group kill", grandchild), func() bool { return !alive(grandchild) })
}

// alive reports whether pid runs and is not a zombie (an orphan may wait to
// be reaped by an init that never does).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

func TestProcessExitWithoutStopKillsGroup(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	p := startHelper(t, &log, "grandchild", nil)
	if err := p.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	// SIGTERM from outside: the process exits by itself, as far as the
	// supervisor knows, leaving its grandchild behind.
	if err := syscallKill(p.Pid()); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, p.Done(), "exit")
	if p.Stopping() {
		t.Error("Stopping() is true, but Stop was never called")
	}
	want := []seen{
		{Kind: bundle.KindProcSignal, Conn: "server", Name: "SIGKILL", Attrs: `{"group":true}`},
		{Kind: bundle.KindProcExit, Conn: "server"},
	}
	if diff := cmp.Diff(want, views(log.events(), signalsAndExit)); diff != "" {
		t.Errorf("exit events (-want +got):\n%s", diff)
	}
	// Stop after the exit adds nothing and does not fail.
	if err := p.Stop(t.Context()); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
	if diff := cmp.Diff(want, views(log.events(), signalsAndExit)); diff != "" {
		t.Errorf("events after a late Stop (-want +got):\n%s", diff)
	}
}

func TestProcessReadyErrors(t *testing.T) {
	tests := []struct {
		name string
		mode string
		opts ProcessOptions
		want error
	}{
		{
			name: "exits before ready",
			mode: "early-exit",
			opts: ProcessOptions{Name: "srv", ReadyLine: readyLine},
			want: &ExitedError{Name: "srv", Code: 3, LastLines: []string{"fatal: no config"}},
		},
		{
			name: "never ready",
			mode: "never-ready",
			opts: ProcessOptions{Name: "srv", ReadyLine: readyLine, ReadyTimeout: 50 * time.Millisecond},
			want: &ReadyTimeoutError{Name: "srv", Timeout: 50 * time.Millisecond, ReadyLine: readyLine, LastLines: []string{"starting"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.CheckLeaks(t)
			var log eventLog
			p := startHelper(t, &log, tt.mode, &tt.opts)
			if tt.mode == "never-ready" {
				// Wait for the line the error must carry: the timeout may
				// otherwise win the race against it.
				waitFor(t, "the first log line", func() bool { return len(views(log.events(), ofKind(bundle.KindProcLog))) > 0 })
			}
			err := p.Ready(t.Context())
			if diff := cmp.Diff(tt.want, err); diff != "" {
				t.Errorf("Ready error (-want +got):\n%s", diff)
			}
			if err != nil && !strings.Contains(err.Error(), `"srv"`) {
				t.Errorf("error %q does not name the process", err)
			}
		})
	}
}

// waitFor polls cond, for conditions with no event to wait on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // hang guard only
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestProcessReadyHonoursContext(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	p := startHelper(t, &log, "never-ready", nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Ready(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ready with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestProcessStopHonoursContext(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	// A grace period far beyond the hang guard: only the done context can
	// make Stop return.
	p := startHelper(t, &log, "ignore-term", &ProcessOptions{ReadyLine: readyLine, StopGrace: time.Hour})
	if err := p.Ready(t.Context()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := p.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}()
	waitClosed(t, stopped, "Stop with a done context")
	want := []seen{
		{Kind: bundle.KindProcSignal, Conn: "server", Name: "SIGTERM"},
		{Kind: bundle.KindProcSignal, Conn: "server", Name: "SIGKILL"},
		{Kind: bundle.KindProcExit, Conn: "server", Code: -1, Name: "SIGKILL"},
	}
	if diff := cmp.Diff(want, views(log.events(), signalsAndExit)); diff != "" {
		t.Errorf("stop events (-want +got):\n%s", diff)
	}
}

func TestProcessConcurrentStops(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	p := startHelper(t, &log, "never-ready", nil)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = p.Stop(t.Context()) })
	}
	wg.Wait()
	if diff := cmp.Diff(make([]error, 4), errs); diff != "" {
		t.Errorf("Stop errors (-want +got):\n%s", diff)
	}
	if n := len(views(log.events(), ofKind(bundle.KindProcSignal))); n != 1 {
		t.Errorf("%d proc.signal events, want one SIGTERM", n)
	}
}

func TestStartProcessBadOptions(t *testing.T) {
	var log eventLog
	tests := []struct {
		name string
		em   Emitter
		opts *ProcessOptions
		want string
	}{
		{"nil options", &log, nil, "needs ProcessOptions with a program in Argv"},
		{"empty argv", &log, &ProcessOptions{}, "needs ProcessOptions with a program in Argv"},
		{"no emitter", nil, &ProcessOptions{Argv: []string{"true"}}, "needs an Emitter"},
		{"missing program", &log, &ProcessOptions{Argv: []string{"/nonexistent/wireproof-server"}},
			`starting "server" (/nonexistent/wireproof-server)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := StartProcess(t.Context(), tt.em, tt.opts)
			if err == nil {
				p.Stop(t.Context())
				t.Fatal("StartProcess succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
	if evs := log.events(); len(evs) != 0 {
		t.Errorf("failed starts emitted %d events", len(evs))
	}
}

// syscallKill sends SIGTERM to pid from outside the supervisor.
func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
