package record

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wireproof/wireproof/bundle"
)

// TestProxyHTTPUploadAnsweredBeforeItsEnd: an upstream that answers an
// upload before reading all of it (a streaming API, a server that reports
// progress) gets the whole upload through the proxy, and the client the
// whole answer. net/http's server, by default, reads and closes what is
// left of a request body at the response's first write: the rest of the
// upload never reached the upstream (here the client, which sends it only
// once the answer has begun, waited for ever).
func TestProxyHTTPUploadAnsweredBeforeItsEnd(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		first := make([]byte, len("first;"))
		if _, err := io.ReadFull(r.Body, first); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, "started\n")
		w.(http.Flusher).Flush()
		rest, err := io.ReadAll(r.Body)
		if err != nil {
			io.WriteString(w, "error: "+err.Error()+"\n")
			return
		}
		io.WriteString(w, "got "+string(first)+string(rest)+"\n")
	}))
	defer up.Close()
	rec := startRecording(t, up.URL, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	// Ended at the deadline, so that a proxy waiting for the upload's end
	// before it answers fails the test instead of hanging it.
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	defer stop()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rec.URL+"/upload", pr)
	go io.WriteString(pw, "first;")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); line != "started\n" {
		t.Fatalf("first line %q (%v), want started", line, err)
	}
	// The rest of the upload goes once the answer has begun.
	go func() {
		io.WriteString(pw, "second part")
		pw.Close()
	}()
	line, err := br.ReadString('\n')
	if want := "got first;second part\n"; line != want {
		t.Errorf("the upstream answered %q (%v), want %q: the upload did not reach it whole", line, err, want)
	}
	if _, err := io.ReadAll(br); err != nil {
		t.Errorf("the answer ended with %v", err)
	}
	var upload string
	for _, ev := range rec.stop() {
		if ev.Kind == bundle.KindHTTPBody && ev.Dir == bundle.DirClientToServer {
			upload += string(ev.Body.Data)
		}
		if ev.Kind == bundle.KindHTTPEnd && ev.Err != "" {
			t.Errorf("http.end err %q", ev.Err)
		}
	}
	if upload != "first;second part" {
		t.Errorf("recorded the upload as %q, want it whole", upload)
	}
}
