package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// rawExchange sends req as it is on a new connection to addr and returns
// every byte the server sends until it closes the connection.
func rawExchange(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v (read %q)", req, err, b)
	}
	return string(b)
}

// headLines returns a raw response's status line and its header lines
// sorted, without Date (it differs by the second). The proxy's server writes
// header lines in its own order (Go sorts them), which HTTP leaves free.
func headLines(s string) []string {
	head, body, _ := strings.Cut(s, "\r\n\r\n")
	lines := strings.Split(head, "\r\n")
	var hs []string
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "Date: ") {
			hs = append(hs, l)
		}
	}
	slices.Sort(hs)
	return append(append([]string{lines[0]}, hs...), "body: "+body)
}

// TestProxyHEAD: a HEAD answered with a Content-Length (a file server's)
// reaches the client through the proxy byte for byte as it does directly,
// status line and headers, no body read or waited for, and the exchange
// ends without an error.
func TestProxyHEAD(t *testing.T) {
	testkit.CheckLeaks(t)
	dir := t.TempDir()
	for name, size := range map[string]int{"one.txt": 1, "page.html": 4096, "big.bin": 1 << 20} {
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Repeat([]byte("x"), size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	up := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer up.Close()
	r := startRecording(t, up.URL, nil)
	proxyAddr := strings.TrimPrefix(r.URL, "http://")
	for _, name := range []string{"one.txt", "page.html", "big.bin", "missing"} {
		req := "HEAD /" + name + " HTTP/1.1\r\nHost: x\r\nUser-Agent: curl/8\r\nAccept: */*\r\nConnection: close\r\n\r\n"
		direct := headLines(rawExchange(t, up.Listener.Addr().String(), req))
		via := headLines(rawExchange(t, proxyAddr, req))
		if diff := cmp.Diff(direct, via); diff != "" {
			t.Errorf("HEAD /%s (-direct +through the proxy):\n%s", name, diff)
		}
		if !slices.ContainsFunc(direct, func(l string) bool { return strings.HasPrefix(l, "Content-Length: ") }) {
			t.Errorf("HEAD /%s: the file server sent no Content-Length: %q", name, direct)
		}
	}
	evs := r.stop()
	ends := 0
	for _, ev := range evs {
		switch ev.Kind {
		case bundle.KindHTTPEnd:
			ends++
			if ev.Err != "" || ev.Size != 0 {
				t.Errorf("http.end of a HEAD: size %d, err %q; want 0 and none", ev.Size, ev.Err)
			}
		case bundle.KindHTTPBody:
			t.Errorf("a body was recorded for a HEAD: %q", ev.Body.Data)
		}
	}
	if ends != 4 {
		t.Errorf("%d exchanges recorded, want 4", ends)
	}
}

// TestProxyInformational: 103 Early Hints reach the client before the final
// response, with their headers, and are recorded in the response's attrs; a
// 100 Continue is the upstream's: a client that expects one uploads only
// once the upstream asked, and not at all when the upstream refuses first.
func TestProxyInformational(t *testing.T) {
	testkit.CheckLeaks(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hints":
			w.Header().Set("Link", "</style.css>; rel=preload; as=style")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("final"))
		case "/refuse":
			w.Header().Set("Connection", "close")
			http.Error(w, "no upload for you", http.StatusUnauthorized)
		case "/upload":
			b, _ := io.ReadAll(r.Body) // the server's 100 Continue goes out here
			fmt.Fprintf(w, "got %d bytes", len(b))
		}
	}))
	defer up.Close()
	r := startRecording(t, up.URL, nil)

	var hints []string
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, fmt.Sprintf("%d %s", code, h.Get("Link")))
		return nil
	}})
	req, _ := http.NewRequestWithContext(ctx, "GET", r.URL+"/hints", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if diff := cmp.Diff([]string{"103 </style.css>; rel=preload; as=style"}, hints); diff != "" {
		t.Errorf("1xx seen by the client (-want +got):\n%s", diff)
	}
	if string(body) != "final" || res.Header.Get("Link") != "" {
		t.Errorf("final response %q with Link %q; want \"final\" without the hint's header", body, res.Header.Get("Link"))
	}

	// An HTTP/1.0 client is sent no 1xx.
	proxyAddr := strings.TrimPrefix(r.URL, "http://")
	if got := rawExchange(t, proxyAddr, "GET /hints HTTP/1.0\r\nHost: x\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.0 200 OK\r\n") {
		t.Errorf("an HTTP/1.0 client was answered %q, want the final response alone", got)
	}

	// Expect: 100-continue by hand, to see what the client is sent before it
	// uploads.
	expect := func(path string) (first string, conn net.Conn, br *bufio.Reader) {
		c, err := net.Dial("tcp", proxyAddr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", path)
		br = bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(time.Minute))
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return strings.TrimSpace(line), c, br
	}
	first, c, _ := expect("/refuse")
	c.Close()
	if first != "HTTP/1.1 401 Unauthorized" {
		t.Errorf("an upstream that refuses: the client was first sent %q, want the 401 (no 100 Continue)", first)
	}
	first, c, br := expect("/upload")
	if first != "HTTP/1.1 100 Continue" {
		t.Errorf("an upstream that reads the body: the client was first sent %q, want 100 Continue", first)
	}
	br.ReadString('\n') // the blank line after the 100
	io.WriteString(c, "hello")
	res, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	c.Close()
	if string(body) != "got 5 bytes" {
		t.Errorf("the upload answered %q, want \"got 5 bytes\"", body)
	}

	evs := r.stop()
	var recorded []string
	for _, ev := range evs {
		if ev.Kind == bundle.KindHTTPResponse && ev.Attrs != nil {
			recorded = append(recorded, string(ev.Attrs))
		}
		if ev.Kind == bundle.KindHTTPBody && ev.Dir == bundle.DirClientToServer && strings.Contains(string(ev.Body.Data), "hello") {
			recorded = append(recorded, "upload "+string(ev.Body.Data))
		}
	}
	// A 1xx is recorded in the attrs of the final response, after the
	// upload it let through.
	hint := `{"informational":[{"status":103,"header":{"Link":["\u003c/style.css\u003e; rel=preload; as=style"]}}]}`
	want := []string{
		hint, hint, // the HTTP/1.0 client's too: recorded, not sent
		"upload hello",
		`{"informational":[{"status":100}]}`,
	}
	if diff := cmp.Diff(want, recorded); diff != "" {
		t.Errorf("recorded 1xx and uploads (-want +got):\n%s", diff)
	}
}

// TestProxyTrailers: a chunked request's trailers reach the upstream, the
// response's reach the client, and both are recorded in http.end.
func TestProxyTrailers(t *testing.T) {
	testkit.CheckLeaks(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Trailer", "X-Echo")
		w.Write(b)
		w.Header().Set("X-Echo", "upstream saw "+r.Trailer.Get("X-Sum"))
	}))
	defer up.Close()
	r := startRecording(t, up.URL, nil)
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte("part one, "))
		pw.Write([]byte("part two"))
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", r.URL+"/sum", pr)
	req.Trailer = http.Header{"X-Sum": {"abc123"}}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "part one, part two" || res.Trailer.Get("X-Echo") != "upstream saw abc123" {
		t.Errorf("client got %q with trailer X-Echo %q; want the body and \"upstream saw abc123\"", body, res.Trailer.Get("X-Echo"))
	}
	evs := r.stop()
	var end *bundle.Event
	for i := range evs {
		if evs[i].Kind == bundle.KindHTTPEnd {
			end = &evs[i]
		}
	}
	if end == nil {
		t.Fatal("no http.end")
	}
	var attrs struct {
		Req http.Header `json:"requestTrailer"`
		Res http.Header `json:"responseTrailer"`
	}
	if err := json.Unmarshal(end.Attrs, &attrs); err != nil {
		t.Fatalf("http.end attrs %s: %v", end.Attrs, err)
	}
	if attrs.Req.Get("X-Sum") != "abc123" || attrs.Res.Get("X-Echo") != "upstream saw abc123" {
		t.Errorf("recorded trailers %s, want X-Sum abc123 and X-Echo \"upstream saw abc123\"", end.Attrs)
	}
}

// TestProxyStalledBodyRelayed: an upstream that sends its headers and part
// of a body of known length, then stalls, has its status line, headers and
// that part reach the client at once, as without the proxy; one that stalls
// after its headers has them reach the client.
func TestProxyStalledBodyRelayed(t *testing.T) {
	testkit.CheckLeaks(t)
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "20")
		if r.URL.Path == "/headers" {
			w.WriteHeader(http.StatusAccepted)
		} else {
			w.Write([]byte("first half"))
		}
		w.(http.Flusher).Flush()
		<-release
		w.Write([]byte("other half"))
	}))
	defer up.Close()
	defer close(release)
	r := startRecording(t, up.URL, nil)
	defer r.stop()
	res, err := http.Get(r.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 10)
	if _, err := io.ReadFull(res.Body, buf); err != nil || string(buf) != "first half" {
		t.Fatalf("read %q, %v before the upstream finished; want \"first half\"", buf, err)
	}
	// Headers and no body byte yet: the status line still comes.
	res2, err := http.Get(r.URL + "/headers")
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	if res2.StatusCode != http.StatusAccepted {
		t.Errorf("status %d before the body, want 202", res2.StatusCode)
	}
}
