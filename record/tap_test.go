package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// notifyingReader reports each chunk it reads, so a test can act between
// reads of a child's output.
type notifyingReader struct {
	r    io.Reader
	read chan<- struct{}
}

func (n notifyingReader) Read(p []byte) (int, error) {
	c, err := n.r.Read(p)
	if c > 0 {
		n.read <- struct{}{}
	}
	return c, err
}

func line(dir bundle.Dir, body string, enc bundle.Encoding, attrs string) seen {
	return seen{Kind: bundle.KindStdioLine, Conn: "provider", Dir: dir, Body: body, Enc: enc, Attrs: attrs}
}

func ofDir(dir bundle.Dir) func(*bundle.Event) bool {
	return func(ev *bundle.Event) bool { return ev.Kind == bundle.KindStdioLine && ev.Dir == dir }
}

// TestTapNDJSONChildProcess talks JSON-RPC over NDJSON with a real child
// process through both taps: requests split across writes, several in one
// write, a line that is not JSON, a last line without newline; answers split
// across reads and a last line without newline.
func TestTapNDJSONChildProcess(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	cmd := testkit.HelperCommand("ndjson-peer")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reads := make(chan struct{}, 16)
	in := TapWriter(&log, "provider", bundle.DirClientToServer, stdin)
	out := TapReader(&log, "provider", bundle.DirServerToClient, notifyingReader{stdout, reads})
	gotOut := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(out)
		gotOut <- b
	}()

	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(in, s); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"me`)
	write(`thod":"initialize"}` + "\n")
	<-reads // the first half of the first answer, without its newline
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for range reads {
		}
	}()
	write(`{"jsonrpc":"2.0","id":2,"method":"a"}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"b"}` + "\n")
	write("not json\n")
	write(`{"jsonrpc":"2.0","id":4,"method":"last"}`)
	if err := in.Close(); err != nil {
		t.Fatalf("closing stdin: %v", err)
	}
	got := <-gotOut
	close(reads) // the reader is done: nothing sends any more
	<-drained
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}

	answers := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"method":"initialize"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"method":"a"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"method":"b"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"method":"last"}}`,
	}
	wantOut := strings.Join(answers, "\n") + "\nbye without newline"
	if diff := cmp.Diff(wantOut, string(got)); diff != "" {
		t.Errorf("bytes through the reader tap (-want +got):\n%s", diff)
	}

	c2s, s2c := bundle.DirClientToServer, bundle.DirServerToClient
	json, text := bundle.EncodingJSON, bundle.EncodingText
	wantIn := []seen{
		line(c2s, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, json, ""),
		line(c2s, `{"jsonrpc":"2.0","id":2,"method":"a"}`, json, ""),
		line(c2s, `{"jsonrpc":"2.0","id":3,"method":"b"}`, json, ""),
		line(c2s, "not json", text, ""),
		line(c2s, `{"jsonrpc":"2.0","id":4,"method":"last"}`, json, `{"noNewline":true}`),
	}
	evs := log.events()
	if diff := cmp.Diff(wantIn, views(evs, ofDir(c2s))); diff != "" {
		t.Errorf("c2s lines (-want +got):\n%s", diff)
	}
	var wantOutLines []seen
	for _, a := range answers {
		wantOutLines = append(wantOutLines, line(s2c, a, json, ""))
	}
	wantOutLines = append(wantOutLines, line(s2c, "bye without newline", text, `{"noNewline":true}`))
	if diff := cmp.Diff(wantOutLines, views(evs, ofDir(s2c))); diff != "" {
		t.Errorf("s2c lines (-want +got):\n%s", diff)
	}
}

func TestTapReaderChunking(t *testing.T) {
	const input = "{\"a\":1}\n{\"b\":[2,3]}\nplain text\n\n{\"tail\":true}"
	want := []seen{
		line(bundle.DirServerToClient, `{"a":1}`, bundle.EncodingJSON, ""),
		line(bundle.DirServerToClient, `{"b":[2,3]}`, bundle.EncodingJSON, ""),
		line(bundle.DirServerToClient, "plain text", bundle.EncodingText, ""),
		line(bundle.DirServerToClient, "", bundle.EncodingText, ""), // an empty line is a line
		line(bundle.DirServerToClient, `{"tail":true}`, bundle.EncodingJSON, `{"noNewline":true}`),
	}
	tests := []struct {
		name string
		r    func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte per read", iotest.OneByteReader},
		{"half reads", iotest.HalfReader},
		{"data with EOF", iotest.DataErrReader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log eventLog
			r := TapReader(&log, "provider", bundle.DirServerToClient, tt.r(strings.NewReader(input)))
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != input {
				t.Errorf("passed through %q, want %q", got, input)
			}
			if diff := cmp.Diff(want, views(log.events(), nil)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTapReaderFlushesOnError(t *testing.T) {
	var log eventLog
	boom := errors.New("pipe broke")
	r := TapReader(&log, "provider", bundle.DirServerToClient,
		io.MultiReader(strings.NewReader("{\"half\":"), iotest.ErrReader(boom)))
	if _, err := io.ReadAll(r); !errors.Is(err, boom) {
		t.Fatalf("ReadAll = %v, want the reader's error", err)
	}
	want := []seen{line(bundle.DirServerToClient, `{"half":`, bundle.EncodingText, `{"noNewline":true}`)}
	if diff := cmp.Diff(want, views(log.events(), nil)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// closeRecorder is a writer that remembers being closed.
type closeRecorder struct {
	bytes.Buffer
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestTapWriterRecordsOnlyAcceptedBytes(t *testing.T) {
	var log eventLog
	var dst closeRecorder
	w := TapWriter(&log, "provider", bundle.DirClientToServer, &dst)
	io.WriteString(w, "{\"id\":1}\n{\"id\"")
	io.WriteString(w, ":2}")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !dst.closed {
		t.Error("Close did not close the underlying writer")
	}
	want := []seen{
		line(bundle.DirClientToServer, `{"id":1}`, bundle.EncodingJSON, ""),
		line(bundle.DirClientToServer, `{"id":2}`, bundle.EncodingJSON, `{"noNewline":true}`),
	}
	if diff := cmp.Diff(want, views(log.events(), nil)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// A writer that takes part of a write: only that part is recorded.
	var short eventLog
	sw := TapWriter(&short, "provider", bundle.DirClientToServer, shortWriter{3})
	if n, err := io.WriteString(sw, "ab\ncd\n"); n != 3 || err == nil {
		t.Errorf("short write = %d, %v; want 3 and an error", n, err)
	}
	if diff := cmp.Diff([]seen{line(bundle.DirClientToServer, "ab", bundle.EncodingText, "")},
		views(short.events(), nil)); diff != "" {
		t.Errorf("events of a short write (-want +got):\n%s", diff)
	}
}

// shortWriter accepts at most n bytes per write.
type shortWriter struct{ n int }

func (s shortWriter) Write(p []byte) (int, error) {
	if len(p) > s.n {
		return s.n, io.ErrShortWrite
	}
	return len(p), nil
}

func TestTapCommand(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	cmd := testkit.HelperCommand("ndjson-peer")
	cmd.Stdin = strings.NewReader(`{"id":7,"method":"ping"}` + "\n" + `{"id":8,"method":"pong"}`)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := TapCommand(t.Context(), &log, "provider", cmd); err != nil {
		t.Fatalf("TapCommand: %v", err)
	}
	wantOut := `{"jsonrpc":"2.0","id":7,"result":{"method":"ping"}}` + "\n" +
		`{"jsonrpc":"2.0","id":8,"result":{"method":"pong"}}` + "\nbye without newline"
	if diff := cmp.Diff(wantOut, stdout.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	c2s, s2c := bundle.DirClientToServer, bundle.DirServerToClient
	want := []seen{
		line(c2s, `{"id":7,"method":"ping"}`, bundle.EncodingJSON, ""),
		line(c2s, `{"id":8,"method":"pong"}`, bundle.EncodingJSON, `{"noNewline":true}`),
		line(s2c, `{"jsonrpc":"2.0","id":7,"result":{"method":"ping"}}`, bundle.EncodingJSON, ""),
		line(s2c, `{"jsonrpc":"2.0","id":8,"result":{"method":"pong"}}`, bundle.EncodingJSON, ""),
		line(s2c, "bye without newline", bundle.EncodingText, `{"noNewline":true}`),
	}
	evs := log.events()
	got := append(views(evs, ofDir(c2s)), views(evs, ofDir(s2c))...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// peerWriter is a caller's stdout whose peer answers each line as soon as
// it reads it: the answer is emitted to log right then.
type peerWriter struct{ log *eventLog }

func (w peerWriter) Write(p []byte) (int, error) {
	for range bytes.Count(p, []byte("\n")) {
		_, _ = w.log.Emit(&bundle.Event{Kind: bundle.KindStdioLine, Conn: "provider", Dir: bundle.DirClientToServer, Body: bundle.Text([]byte("an answer"))})
	}
	return len(p), nil
}

// TestTapCommandRecordsALineBeforeItsAnswer: a line of the command is
// recorded before the caller's stdout gets it, so a peer that answers it at
// once (a Codex app-server's approval request, answered by its client) has
// its answer recorded after it, not before.
func TestTapCommandRecordsALineBeforeItsAnswer(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	cmd := testkit.HelperCommand("ndjson-peer")
	cmd.Stdin = strings.NewReader(`{"id":7,"method":"ping"}` + "\n")
	cmd.Stdout = peerWriter{&log}
	if err := TapCommand(t.Context(), &log, "provider", cmd); err != nil {
		t.Fatalf("TapCommand: %v", err)
	}
	var got []string
	for _, ev := range log.events() {
		if ev.Dir == bundle.DirServerToClient || string(ev.Body.Data) == "an answer" {
			got = append(got, string(ev.Body.Data))
		}
	}
	want := []string{`{"jsonrpc":"2.0","id":7,"result":{"method":"ping"}}`, "an answer"}
	if len(got) < 2 || !cmp.Equal(want, got[:2]) {
		t.Errorf("recorded %q, want the line before its answer: %q", got, want)
	}
}

func TestTapCommandKilledByContext(t *testing.T) {
	testkit.CheckLeaks(t)
	var log eventLog
	cmd := testkit.HelperCommand("sleeper")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := TapCommand(ctx, &log, "provider", cmd)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("TapCommand = %v, want it to say the context ended it", err)
	}
	if err := TapCommand(t.Context(), &log, "provider", cmd); err == nil || !strings.Contains(err.Error(), "already started") {
		t.Errorf("TapCommand of a started command = %v, want an error", err)
	}
}

// A reader tap passes bytes through and records each NDJSON line; JSON lines
// are embedded as JSON, anything else as text.
func ExampleTapReader() {
	stdout := strings.NewReader("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nwarming up\n{\"jsonrpc\":")
	r := TapReader(printer{}, "codex", bundle.DirServerToClient, stdout)
	b, _ := io.ReadAll(r)
	fmt.Printf("read %d bytes\n", len(b))
	// Output:
	// stdio.line codex s2c json:{"jsonrpc":"2.0","id":1,"result":{}}
	// stdio.line codex s2c text:warming up
	// stdio.line codex s2c text:{"jsonrpc":
	// read 59 bytes
}
