//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputToFIFO: an -o that names a named pipe (as /dev/stdout or a
// shell's >(...) may) is written into, as the user asked, not replaced by a
// regular file renamed over it, and its name is not printed after the
// output (export -o /dev/stdout | jq reads the HAR alone).
func TestOutputToFIFO(t *testing.T) {
	golden := filepath.Join("..", "..", "fixtures", "golden", "live", "idle.zst")
	fifo := filepath.Join(t.TempDir(), "out.har")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the writer opens it
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	// A second name of the pipe: should export replace the first, opening
	// this one for writing still lets the reader's open return.
	keep := fifo + ".keep"
	if err := os.Link(fifo, keep); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "export", "-o", fifo, golden)
	if w, err := os.OpenFile(keep, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close() // ENXIO when the reader is done already
	}
	b := <-got
	if code != exitOK {
		t.Fatalf("export -o FIFO: exit %d\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("export -o FIFO printed %q after the output", stdout)
	}
	if !strings.Contains(string(b), `"creator"`) {
		t.Errorf("the FIFO's reader got %d bytes, not the HAR: %.200q", len(b), b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}
}
