package record

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

func TestMain(m *testing.M) {
	// The process and tap tests supervise real processes: this test binary
	// re-executed in one of these modes.
	helpers := map[string]func() int{}
	for _, mode := range []string{"lines", "fd3", "ignore-term", "grandchild", "sleeper", "early-exit", "never-ready", "ndjson-peer", "supervisor", "print-hex"} {
		helpers[mode] = func() int { return runHelper(mode) }
	}
	testkit.Main(m, &testkit.Options{Helpers: helpers})
}

// sleepForever blocks the helper until it is killed; timers keep the runtime
// from declaring a deadlock.
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// runHelper is the child side of the tests.
func runHelper(mode string) int {
	out, errw := os.Stdout, os.Stderr
	switch mode {
	case "lines":
		fmt.Fprint(out, "out 1\n")
		fmt.Fprint(errw, "err 1\n")
		fmt.Fprint(out, "token=SECRET123 in a log\n")
		fmt.Fprint(errw, "startup phase: complete\n")
		fmt.Fprint(out, strings.Repeat("x", 40)+"\n")
		fmt.Fprint(out, "tail without newline")
		return 0
	case "fd3":
		b, err := io.ReadAll(os.NewFile(3, "bootstrap"))
		if err != nil {
			fmt.Fprintln(errw, "reading fd 3:", err)
			return 1
		}
		fmt.Fprintf(out, "fd3: %s\n", b)
		fmt.Fprint(out, "startup phase: complete\n")
		return 0
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprint(out, "startup phase: complete\n")
		sleepForever()
	case "grandchild":
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		gc := testkit.HelperCommand("sleeper")
		gc.Stdout = out // the grandchild holds the output pipe open
		if err := gc.Start(); err != nil {
			fmt.Fprintln(errw, "starting grandchild:", err)
			return 1
		}
		fmt.Fprintf(out, "grandchild %d\n", gc.Process.Pid)
		fmt.Fprint(out, "startup phase: complete\n")
		<-term
		fmt.Fprint(out, "got SIGTERM\n")
		return 0 // leaves the grandchild behind
	case "sleeper":
		sleepForever()
	case "early-exit":
		fmt.Fprint(errw, "fatal: no config\n")
		return 3
	case "never-ready":
		fmt.Fprint(out, "starting\n")
		sleepForever()
	case "ndjson-peer":
		return ndjsonPeer(os.Stdin, out)
	case "supervisor":
		return supervisor(out)
	case "print-hex":
		return printHex(os.Args[2:], out, errw)
	}
	fmt.Fprintf(errw, "unknown helper mode %q\n", mode)
	return 2
}

// printHex writes each of args, "o:N:HEX" or "e:N:HEX", as a line to out
// (o, N bytes "y" before the text) or errw (e, N bytes "z" before it): the
// text is given hex-encoded, so what it holds is not in the helper's argv.
func printHex(args []string, out, errw io.Writer) int {
	for _, a := range args {
		w, fill := out, "y"
		if strings.HasPrefix(a, "e:") {
			w, fill = errw, "z"
		}
		n, text, _ := strings.Cut(a[2:], ":")
		count, err := strconv.Atoi(n)
		b, err2 := hex.DecodeString(text)
		if err != nil || err2 != nil {
			fmt.Fprintln(errw, "print-hex: bad argument", a)
			return 2
		}
		if _, err := io.WriteString(w, strings.Repeat(fill, count)+string(b)+"\n"); err != nil {
			return 1
		}
	}
	return 0
}

// ndjsonPeer answers NDJSON requests on stdin like a provider process speaking
// JSON-RPC 2.0: one result line per JSON request, an error line for anything
// else. Its first answer is written in two writes around the next request, so
// the reader surely sees a line split across reads; the last line it writes
// has no newline.
func ndjsonPeer(in io.Reader, out io.Writer) int {
	sc := bufio.NewScanner(in)
	first := true
	var held string
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		var answer string
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			answer = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n"
		} else {
			answer = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"method":%q}}`+"\n", req.ID, req.Method)
		}
		if first {
			first = false
			half := len(answer) / 2
			io.WriteString(out, answer[:half])
			held = answer[half:]
			continue
		}
		io.WriteString(out, held+answer)
		held = ""
	}
	io.WriteString(out, held+"bye without newline")
	return 0
}

// eventLog is an Emitter that keeps every event in order, as the Recorder
// would hand them to a subscriber.
type eventLog struct {
	mu  sync.Mutex
	evs []*bundle.Event
}

func (l *eventLog) Emit(ev *bundle.Event) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, ev)
	return uint64(len(l.evs) - 1), nil
}

func (l *eventLog) events() []*bundle.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*bundle.Event(nil), l.evs...)
}

// seen is the part of an event a test compares.
type seen struct {
	Kind   bundle.Kind
	Conn   string
	Dir    bundle.Dir `json:",omitempty"`
	Type   string     `json:",omitempty"`
	Name   string     `json:",omitempty"`
	Method string     `json:",omitempty"`
	URL    string     `json:",omitempty"`
	Status int        `json:",omitempty"`
	Code   int        `json:",omitempty"`
	Body   string     `json:",omitempty"`
	Enc    bundle.Encoding
	Attrs  string `json:",omitempty"`
	Err    string `json:",omitempty"`
}

func view(ev *bundle.Event) seen {
	return seen{Kind: ev.Kind, Conn: ev.Conn, Dir: ev.Dir, Type: ev.Type, Name: ev.Name,
		Method: ev.Method, URL: ev.URL, Status: ev.Status, Code: ev.Code,
		Body: string(ev.Body.Data), Enc: ev.Body.Encoding(), Attrs: string(ev.Attrs), Err: ev.Err}
}

// views returns the events that keep says to keep, as seen values.
func views(evs []*bundle.Event, keep func(*bundle.Event) bool) []seen {
	var out []seen
	for _, ev := range evs {
		if keep == nil || keep(ev) {
			out = append(out, view(ev))
		}
	}
	return out
}

// waitClosed waits for ch. The deadline is a hang guard that turns a hung
// test into a failure naming what never happened; it is not a timing check.
func waitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("%s never happened", what)
	}
}
