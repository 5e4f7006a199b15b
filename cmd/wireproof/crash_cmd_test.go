package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireproof/wireproof/bundle"
)

// A recorder killed with SIGKILL mid-stream leaves a bundle that inspect reads
// up to the last flush and reports as truncated (exit 0: the evidence was
// read).
func TestRecorderKilledBundleIsReadable(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	defer upstream.Close()

	out := filepath.Join(t.TempDir(), "killed.zst")
	rec := exec.Command(wireproofBin, "record", "--upstream", upstream.URL, "-o", out)
	stdout, err := rec.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	defer rec.Process.Kill()
	proxyURL, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the proxy URL: %v", err)
	}
	proxyURL = strings.TrimSpace(proxyURL)

	// Traffic, then wait until the writer has flushed it to the file.
	const requests = 20
	for i := range requests {
		res, err := http.Get(fmt.Sprintf("%s/r/%d", proxyURL, i))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	deadline := time.Now().Add(30 * time.Second)
	for countEnds(out) < requests {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d exchanges reached the file", countEnds(out), requests)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := rec.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rec.Wait()

	cmd := exec.Command(wireproofBin, "inspect", out)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspect of the killed recorder's bundle: %v\n%s", err, e.String())
	}
	if !strings.Contains(o.String(), "truncated") || !strings.Contains(e.String(), "truncated") {
		t.Errorf("inspect does not report the truncation:\nstdout:\n%s\nstderr:\n%s", o.String(), e.String())
	}
	for i := range requests {
		if !strings.Contains(o.String(), fmt.Sprintf("/r/%d ", i)) {
			t.Errorf("request /r/%d recorded before the kill is missing from the timeline", i)
		}
	}
}

// countEnds counts the http.end events readable in a bundle being written.
func countEnds(path string) int {
	r, err := bundle.Open(path, nil)
	if err != nil {
		return 0
	}
	defer r.Close()
	n := 0
	for {
		var ev bundle.Event
		if err := r.Next(&ev); err != nil {
			return n // the end of what was flushed so far
		}
		if ev.Kind == bundle.KindHTTPEnd {
			n++
		}
	}
}
