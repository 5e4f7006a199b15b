package record

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// recording is a proxy in front of an upstream, recording into a real bundle.
type recording struct {
	t    *testing.T
	rec  *Recorder
	srv  *Server
	path string
	URL  string
}

func startRecording(t *testing.T, upstream string, opts *Options) *recording {
	t.Helper()
	return startRecordingWith(t, upstream, opts, ProxyOptions{})
}

// stop closes the proxy and the recording and returns every event recorded.
func (r *recording) stop() []bundle.Event {
	r.t.Helper()
	if r.srv == nil {
		return nil
	}
	if err := r.srv.Close(context.Background()); err != nil {
		r.t.Errorf("closing the proxy: %v", err)
	}
	r.srv = nil
	if err := r.rec.Close(); err != nil {
		r.t.Errorf("closing the recorder: %v", err)
	}
	return readBundle(r.t, r.path)
}

// evView is the part of an event the proxy tests compare.
type evView struct {
	Kind      bundle.Kind
	Conn      string
	Dir       bundle.Dir
	Type      string
	Method    string
	URL       string
	Status    int
	Code      int
	Reason    string
	Body      string
	Size      int64
	Truncated bool
	Err       bool
}

// evViews returns the comparable part of evs, with consecutive body chunks of
// one direction merged: how a stream is cut into reads is not the proxy's
// choice (TestProxySSEStreams checks chunks one by one).
func evViews(evs []bundle.Event) []evView {
	out := make([]evView, 0, len(evs))
	for _, ev := range evs {
		if n := len(out); n > 0 && ev.Kind == bundle.KindHTTPBody && out[n-1].Kind == ev.Kind && out[n-1].Conn == ev.Conn && out[n-1].Dir == ev.Dir {
			out[n-1].Body += string(ev.Body.Data)
			continue
		}
		out = append(out, evView{Kind: ev.Kind, Conn: ev.Conn, Dir: ev.Dir, Type: ev.Type, Method: ev.Method, URL: ev.URL,
			Status: ev.Status, Code: ev.Code, Reason: ev.Reason, Body: string(ev.Body.Data), Size: ev.Size,
			Truncated: ev.Truncated, Err: ev.Err != ""})
	}
	return out
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestProxyHTTP(t *testing.T) {
	testkit.CheckLeaks(t)
	big := bytes.Repeat([]byte("x"), 5000)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"q":%q}`, r.URL.Query().Get("q"))
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(b)
		case "/big":
			w.Write(big)
		case "/big-chunked":
			for range 5 {
				w.Write(big[:1000])
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer upstream.Close()

	for _, c := range []struct {
		name     string
		method   string
		path     string
		body     []byte
		wantBody []byte
		want     []evView
	}{
		{
			name: "json", method: "GET", path: "/json?q=hi", wantBody: []byte(`{"q":"hi"}`),
			want: []evView{
				{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/json?q=hi"},
				{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
				{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: `{"q":"hi"}`},
				{Kind: bundle.KindHTTPEnd, Conn: "h1", Size: 10},
			},
		},
		{
			name: "binary", method: "POST", path: "/echo", body: allBytes(), wantBody: allBytes(),
			want: []evView{
				{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "POST", URL: "/echo"},
				{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirClientToServer, Body: string(allBytes())},
				{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
				{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: string(allBytes())},
				{Kind: bundle.KindHTTPEnd, Conn: "h1", Size: 256},
			},
		},
		{
			name: "over the cap", method: "GET", path: "/big", wantBody: big,
			want: []evView{
				{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/big"},
				{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
				{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: string(big[:1500])},
				{Kind: bundle.KindHTTPEnd, Conn: "h1", Size: 5000, Truncated: true},
			},
		},
		{
			name: "streamed over the cap", method: "GET", path: "/big-chunked", wantBody: big,
			want: []evView{
				{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/big-chunked"},
				{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
				{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: string(big[:1500])},
				{Kind: bundle.KindHTTPEnd, Conn: "h1", Size: 5000, Truncated: true},
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := startRecording(t, upstream.URL, &Options{BodyCap: 1500})
			req, err := http.NewRequest(c.method, r.URL+c.path, bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.body == nil {
				req.Body = http.NoBody
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.wantBody) {
				t.Errorf("client got %d bytes %q, want %d bytes", len(got), trimForLog(got), len(c.wantBody))
			}
			http.DefaultClient.CloseIdleConnections()
			if diff := cmp.Diff(c.want, evViews(r.stop())); diff != "" {
				t.Errorf("recorded (-want +got):\n%s", diff)
			}
		})
	}
}

func trimForLog(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// TestProxySSEStreams proves the proxy does not buffer a streamed body: the
// upstream writes each event only after the client has read the previous one
// through the proxy, so a buffering proxy would deadlock the test.
func TestProxySSEStreams(t *testing.T) {
	testkit.CheckLeaks(t)
	release := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			if i > 0 {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			fmt.Fprintf(w, "data: {\"n\":%d}\n\n", i)
			w.(http.Flusher).Flush()
		}
	}))
	defer upstream.Close()
	r := startRecording(t, upstream.URL, nil)

	res, err := http.Get(r.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(res.Body)
	for i := range 3 {
		var event strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			event.WriteString(line)
			if line == "\n" {
				break
			}
		}
		if want := fmt.Sprintf("data: {\"n\":%d}\n\n", i); event.String() != want {
			t.Errorf("event %d = %q, want %q", i, event.String(), want)
		}
		if i < 2 {
			release <- struct{}{}
		}
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	http.DefaultClient.CloseIdleConnections()

	var chunks []bundle.Event
	for _, ev := range r.stop() {
		if ev.Kind == bundle.KindHTTPBody {
			chunks = append(chunks, ev)
		}
	}
	var bodies []string
	for i, ev := range chunks {
		bodies = append(bodies, string(ev.Body.Data))
		if i > 0 && ev.T <= chunks[i-1].T {
			t.Errorf("chunk %d recorded at t=%d, not after chunk %d at t=%d", i, ev.T, i-1, chunks[i-1].T)
		}
	}
	want := []string{"data: {\"n\":0}\n\n", "data: {\"n\":1}\n\n", "data: {\"n\":2}\n\n"}
	if diff := cmp.Diff(want, bodies); diff != "" {
		t.Errorf("recorded chunks (-want +got):\n%s", diff)
	}
}

func TestProxyHTTPUpstreamDown(t *testing.T) {
	testkit.CheckLeaks(t)
	upstream := httptest.NewServer(http.NotFoundHandler())
	addr := upstream.URL
	upstream.Close()
	r := startRecording(t, addr, nil)
	res, err := http.Get(r.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadGateway {
		t.Errorf("status = %d, want 502", res.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()
	want := []evView{
		{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/x"},
		{Kind: bundle.KindHTTPEnd, Conn: "h1", Err: true},
	}
	if diff := cmp.Diff(want, evViews(r.stop())); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func TestNewProxyErrors(t *testing.T) {
	rec := New(nil, nil)
	defer rec.Close()
	for _, c := range []struct {
		name, upstream, want string
	}{
		{"no scheme", "localhost:80", "scheme must be http or https"},
		{"ws scheme", "ws://127.0.0.1:80", "scheme must be http or https"},
		{"no host", "http://", "has no host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, _ := url.Parse(c.upstream)
			_, err := NewProxy(rec, &ProxyOptions{Upstream: u})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewProxy(%q) = %v, want an error containing %q", c.upstream, err, c.want)
			}
		})
	}
}

func ExampleProxy() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"access_token": "tok-0123456789"})
	}))
	defer upstream.Close()

	rec := New(nil, nil)
	done := make(chan struct{})
	rec.Subscribe("print", SubscriberFunc(func(ev *bundle.Event) error {
		fmt.Println(strings.TrimSpace(fmt.Sprint(ev.Seq, " ", ev.Kind, " ", ev.Conn, " ", strings.TrimSpace(string(ev.Body.Data)))))
		if ev.Kind == bundle.KindHTTPEnd {
			close(done)
		}
		return nil
	}))
	u, _ := url.Parse(upstream.URL)
	p, _ := NewProxy(rec, &ProxyOptions{Upstream: u})
	srv, _ := Listen(context.Background(), "127.0.0.1:0", p)
	res, _ := http.Post(srv.URL+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader("subject_token=boot-secret-1"))
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	<-done
	srv.Close(context.Background())
	rec.Close()
	// Output:
	// 1 http.request h1
	// 2 http.body h1 subject_token=[REDACTED]
	// 3 http.response h1
	// 4 http.body h1 {"access_token":"[REDACTED]"}
	// 5 http.end h1
}

// TestProxyConnPrefix: two proxies record into one Recorder, the second
// with a ConnPrefix, and their exchanges keep apart: "h1" and "model-h1".
func TestProxyConnPrefix(t *testing.T) {
	rec, path := newFileRecorder(t, nil)
	var urls []string
	for i, prefix := range []string{"", "model-"} {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, i) }))
		defer up.Close()
		u, _ := url.Parse(up.URL)
		p, err := NewProxy(rec, &ProxyOptions{Upstream: u, ConnPrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		srv, err := Listen(context.Background(), "", p)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close(context.Background())
		urls = append(urls, srv.URL)
	}
	for _, u := range urls {
		res, err := http.Get(u + "/x")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ev := range readBundle(t, path) {
		if ev.Kind == bundle.KindHTTPBody {
			got[ev.Conn] = string(ev.Body.Data)
		}
	}
	if diff := cmp.Diff(map[string]string{"h1": "0", "model-h1": "1"}, got); diff != "" {
		t.Errorf("response bodies by connection (-want +got):\n%s", diff)
	}
}
