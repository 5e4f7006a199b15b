package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/coder/websocket"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/spelling"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/record"
)

// leakSecret is the --redact secret of the leak table: it holds the
// characters whose spellings differ (- / & < > space, a non-ASCII letter).
const leakSecret = "Xk9-s3cr3t/T0k&<en> ü"

// leakCore is a part of leakSecret that occurs nowhere else: finding it, in
// any spelling, in any output means a piece of the secret got through.
const leakCore = "s3cr3t"

// leakToken is learned by the recorder from a token field, never given.
const leakToken = "lrn-9f8e7d6c5b4a"

// leakEnv drives one leak case: the spelled secret, and the two halves of it
// for the channels that split it across chunks or frames.
type leakEnv struct {
	t          *testing.T
	proxy      string // the recording proxy's base URL
	rec        *record.Recorder
	spelled    string
	half1      string // spelled[:k] and spelled[k:], k inside the secret's core
	half2      string
	next       chan struct{} // the client tells the upstream to send its second half
	serverSent chan struct{} // the upstream tells the client its first half is out
	bodyCap    int64         // the recorder's body cap, 0 for the default
	up         *leakServer
	path       string
	stop       func()
}

type leakCase struct {
	channel   string
	spellings []string
	run       func(e *leakEnv)
}

var (
	allSpellings   = []string{"raw", "json-go", "json-u-lower", "json-u-upper", "json-slash", "pct-upper", "pct-lower", "form", "mixed"}
	splitSpellings = []string{"raw", "json-u-upper", "mixed"}
	urlSpellings   = []string{"pct-upper", "pct-lower", "form"}
)

// TestRedactLeakTable records the secret through a real loopback proxy (or a
// stdio tap) in every channel and spelling, and checks that no spelling of it,
// nor of a piece of it, is in the decompressed bundle, in the bundle's
// payloads joined per connection and direction, in `inspect` (plain, --full,
// --json), in the HAR export or in the HTML report.
func TestRedactLeakTable(t *testing.T) {
	cases := []leakCase{
		{"request header", []string{"raw", "json-u-lower", "pct-lower", "form"}, func(e *leakEnv) {
			e.do("GET", "/plain", nil, http.Header{"X-Note": {e.spelled}})
		}},
		{"response header", []string{"raw", "json-go", "pct-upper"}, func(e *leakEnv) {
			e.do("GET", "/header", nil, nil)
		}},
		{"query", urlSpellings, func(e *leakEnv) { e.do("GET", "/plain?note="+e.spelled, nil, nil) }},
		{"request body", allSpellings, func(e *leakEnv) {
			e.do("POST", "/plain", strings.NewReader(`{"note":"`+e.spelled+`"}`), nil)
		}},
		{"response body", allSpellings, func(e *leakEnv) {
			e.do("GET", "/echo", nil, nil)
		}},
		{"chunked request", splitSpellings, func(e *leakEnv) { e.chunkedRequest() }},
		{"chunked response", splitSpellings, func(e *leakEnv) { e.splitResponse("/split", "") }},
		{"server-sent events", splitSpellings, func(e *leakEnv) { e.splitResponse("/split", "text/event-stream") }},
		{"ws text frame", []string{"raw", "json-go", "json-u-lower"}, func(e *leakEnv) {
			e.ws(func(ctx context.Context, c *websocket.Conn) error {
				return c.Write(ctx, websocket.MessageText, []byte(`{"note":"`+e.spelled+`"}`))
			})
		}},
		{"ws split frames", splitSpellings, func(e *leakEnv) {
			e.ws(func(ctx context.Context, c *websocket.Conn) error {
				w, err := c.Writer(ctx, websocket.MessageText)
				if err != nil {
					return err
				}
				if _, err := w.Write([]byte(`{"note":"` + e.half1)); err != nil {
					return err
				}
				if _, err := w.Write([]byte(e.half2 + `"}`)); err != nil {
					return err
				}
				return w.Close()
			})
		}},
		{"ws binary frame", []string{"raw", "pct-upper"}, func(e *leakEnv) {
			e.ws(func(ctx context.Context, c *websocket.Conn) error {
				return c.Write(ctx, websocket.MessageBinary, append([]byte{0, 1, 2}, e.spelled...))
			})
		}},
		{"stdio tap line", []string{"raw", "json-go", "json-u-upper"}, func(e *leakEnv) {
			tr := record.TapReader(e.rec, "stdio", bundle.DirServerToClient,
				strings.NewReader(`{"jsonrpc":"2.0","result":{"note":"`+e.spelled+`"}}`+"\n"))
			if _, err := io.Copy(io.Discard, tr); err != nil {
				e.t.Fatal(err)
			}
		}},
		{"gzip body", []string{"raw", "json-go"}, func(e *leakEnv) { e.compressed("gzip", false) }},
		{"deflate body", []string{"raw", "pct-lower"}, func(e *leakEnv) { e.compressed("deflate", false) }},
		{"br body", []string{"raw", "json-u-upper"}, func(e *leakEnv) { e.compressed("br", false) }},
		{"zstd body", []string{"raw", "mixed"}, func(e *leakEnv) { e.compressed("zstd", false) }},
		{"gzip streamed body", []string{"raw"}, func(e *leakEnv) { e.compressed("gzip", true) }},
		{"zstd streamed body", []string{"json-u-lower"}, func(e *leakEnv) { e.compressed("zstd", true) }},
		{"gzip request body", []string{"raw", "pct-upper"}, func(e *leakEnv) {
			e.do("POST", "/plain", bytes.NewReader(compress(e.t, "gzip", []byte(e.compressedPlain()))), http.Header{"Content-Encoding": {"gzip"}})
		}},
		{"zstd chunked request body", []string{"json-go"}, func(e *leakEnv) {
			pr, pw := io.Pipe()
			enc := compress(e.t, "zstd", []byte(e.compressedPlain()))
			go func() {
				for i := 0; i < len(enc); i += 5 {
					pw.Write(enc[i:min(i+5, len(enc))])
				}
				pw.Close()
			}()
			e.do("POST", "/plain", pr, http.Header{"Content-Encoding": {"zstd"}})
		}},
		// A header name, whatever case Go's server and client give it.
		{"request header name", []string{"pct-upper", "pct-lower"}, func(e *leakEnv) {
			e.do("GET", "/plain", nil, http.Header{"X-" + e.spelled: {"1"}})
		}},
		{"response header name", []string{"pct-upper", "pct-lower"}, func(e *leakEnv) {
			e.do("GET", "/headername", nil, nil)
		}},
		{"method", []string{"pct-upper", "pct-lower"}, func(e *leakEnv) {
			e.do("X"+e.spelled, "/plain", nil, nil)
		}},
		// The body cap falls inside the secret of a body with a
		// Content-Length: the prefix before the cap is not recorded.
		{"body cap, response", []string{"raw", "json-u-upper", "mixed"}, func(e *leakEnv) {
			e.bodyCap = int64(len(`{"note":"`) + len(e.half1))
			e.restart()
			e.do("GET", "/echo", nil, nil)
		}},
		{"body cap, request", []string{"raw", "pct-lower"}, func(e *leakEnv) {
			e.bodyCap = int64(len(`{"note":"`) + len(e.half1))
			e.restart()
			e.do("POST", "/plain", strings.NewReader(`{"note":"`+e.spelled+`"}`), nil)
		}},
		// base64 wrapped every 76 characters, as the base64 tool writes it,
		// with a line break inside the secret's base64.
		{"base64 wrapped body", []string{"raw"}, func(e *leakEnv) {
			text := strings.Repeat("p", 50) + e.spelled + " and the rest of the attachment"
			enc := base64.StdEncoding.EncodeToString([]byte(text))
			var wrapped strings.Builder
			for i := 0; i < len(enc); i += 76 {
				wrapped.WriteString(enc[i:min(i+76, len(enc))] + "\n")
			}
			e.do("POST", "/plain", strings.NewReader(wrapped.String()), nil)
			e.do("POST", "/plain", strings.NewReader(`{"attachment":"`+strings.ReplaceAll(wrapped.String(), "\n", `\r\n`)+`"}`), nil)
		}},
		{"basic auth", []string{"raw"}, func(e *leakEnv) {
			cred := base64.StdEncoding.EncodeToString([]byte("alice:" + leakSecret))
			e.do("POST", "/plain", strings.NewReader(`{"auth":"Basic `+cred+`"}`), http.Header{"Authorization": {"Basic " + cred}})
		}},
	}
	n := 0
	for _, c := range cases {
		n += len(c.spellings)
	}
	if n < 40 {
		t.Fatalf("the table has %d cases, want at least 40", n)
	}

	up := leakUpstream(t)
	for _, c := range cases {
		for _, sp := range c.spellings {
			t.Run(c.channel+"/"+sp, func(t *testing.T) {
				spelled := spelling.Spell(leakSecret, sp)
				// Split inside the core, so neither half holds the secret.
				k := strings.Index(spelled, spelling.Spell(leakCore, sp)) + len(spelling.Spell("s3c", sp))
				path := filepath.Join(t.TempDir(), "leak.zst")
				e := &leakEnv{t: t, spelled: spelled, half1: spelled[:k], half2: spelled[k:]}
				e.stop = e.start(up, path)
				c.run(e)
				e.stop()
				checkNoLeak(t, path, leakSecret, leakCore)
			})
		}
	}
	// A token the recorder learns from a token field is redacted when it comes
	// back later split across two chunks of a streamed body.
	for _, ct := range []string{"", "text/event-stream"} {
		t.Run("learned token split/"+ct, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leak.zst")
			e := &leakEnv{t: t, spelled: leakToken, half1: leakToken[:7], half2: leakToken[7:]}
			stop := e.start(up, path)
			e.do("POST", "/plain", strings.NewReader(`{"access_token":"`+leakToken+`"}`), nil)
			e.splitResponse("/split", ct)
			stop()
			checkNoLeak(t, path, leakToken, leakToken[4:])
		})
	}
}

// restart records anew, with the options of e as they are now.
func (e *leakEnv) restart() {
	e.stop()
	if err := os.Remove(e.path); err != nil {
		e.t.Fatal(err)
	}
	e.stop = e.start(e.up, e.path)
}

// start records into path through a proxy in front of up and returns the
// function that stops it and closes the bundle.
func (e *leakEnv) start(up *leakServer, path string) func() {
	t := e.t
	e.up, e.path = up, path
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.rec = record.New(w, &record.Options{Redact: []string{leakSecret}, BodyCap: e.bodyCap})
	u, _ := url.Parse(up.URL)
	p, err := record.NewProxy(e.rec, &record.ProxyOptions{Upstream: u})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := record.Listen(context.Background(), "", p)
	if err != nil {
		t.Fatal(err)
	}
	e.proxy = srv.URL
	e.next, e.serverSent = make(chan struct{}), make(chan struct{})
	up.set(e)
	return func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if err := e.rec.Close(); err != nil {
			t.Error(err)
		}
	}
}

func (e *leakEnv) do(method, path string, body io.Reader, h http.Header) []byte {
	e.t.Helper()
	req, err := http.NewRequest(method, e.proxy+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		e.t.Fatalf("%s %s: %s: %s", method, path, res.Status, b)
	}
	return b
}

// chunkedRequest streams a request body in two chunks: the second is written
// only after the upstream has read the first, so the proxy relays them apart.
func (e *leakEnv) chunkedRequest() {
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"note":"` + e.half1))
		<-e.serverSent
		pw.Write([]byte(e.half2 + `"}`))
		pw.Close()
	}()
	got := e.do("POST", "/readsplit", pr, nil)
	if want := `{"note":"` + e.spelled + `"}`; string(got) != want {
		e.t.Errorf("the upstream read %q, want %q", got, want)
	}
}

// splitResponse fetches a streamed response whose second half the upstream
// sends only once the client has read the first.
func (e *leakEnv) splitResponse(path, contentType string) {
	t := e.t
	res, err := http.Get(e.proxy + path + "?ct=" + url.QueryEscape(contentType))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	first := "data: " + e.half1
	buf := make([]byte, len(first))
	if _, err := io.ReadFull(res.Body, buf); err != nil {
		t.Fatal(err)
	}
	close(e.next)
	rest, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(buf)+string(rest), "data: "+e.spelled+"\n\n"; got != want {
		t.Errorf("the client read %q, want %q", got, want)
	}
}

// ws opens a WebSocket through the proxy, sends what send sends and reads the
// upstream's echo of it.
func (e *leakEnv) ws(send func(context.Context, *websocket.Conn) error) {
	t := e.t
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.proxy, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := send(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// compressed fetches a body the upstream compresses with coding, whole (with
// a Content-Length) or streamed, and checks the client got it as sent.
func (e *leakEnv) compressed(coding string, streamed bool) {
	t := e.t
	enc := compress(t, coding, []byte(e.compressedPlain()))
	q := url.Values{"coding": {coding}}
	if streamed {
		q.Set("stream", "1")
	}
	req, _ := http.NewRequest("GET", e.proxy+"/compressed?"+q.Encode(), nil)
	req.Header.Set("Accept-Encoding", coding)
	res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Get("Content-Encoding") != coding || !bytes.Equal(got, enc) {
		t.Errorf("the client did not get the upstream's %s bytes unchanged (%d bytes, want %d)", coding, len(got), len(enc))
	}
}

// compressedPlain is the text the upstream compresses.
func (e *leakEnv) compressedPlain() string {
	return `{"note":"` + e.spelled + `","pad":"` + strings.Repeat("abc ", 2000) + `"}`
}

func compress(t *testing.T, coding string, b []byte) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "br":
		w = brotli.NewWriter(&buf)
	case "zstd":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	}
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// leakServer is the upstream of every case.
type leakServer struct {
	*httptest.Server
	cur atomic.Pointer[leakEnv]
}

func (s *leakServer) set(e *leakEnv) { s.cur.Store(e) }

func leakUpstream(t *testing.T) *leakServer {
	s := &leakServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := s.cur.Load()
		switch r.URL.Path {
		case "/plain":
			io.Copy(io.Discard, r.Body)
			w.Write([]byte(`{"ok":true}`))
		case "/header":
			w.Header().Set("X-Note", e.spelled)
			w.Write([]byte(`{"ok":true}`))
		case "/headername":
			w.Header()["X-"+e.spelled] = []string{"1"}
			w.Write([]byte(`{"ok":true}`))
		case "/echo":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"note":"` + e.spelled + `"}`))
		case "/readsplit":
			first := []byte(`{"note":"` + e.half1)
			buf := make([]byte, len(first))
			if _, err := io.ReadFull(r.Body, buf); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			close(e.serverSent)
			rest, _ := io.ReadAll(r.Body)
			w.Write(append(buf, rest...))
		case "/split":
			if ct := r.URL.Query().Get("ct"); ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			w.Write([]byte("data: " + e.half1))
			w.(http.Flusher).Flush()
			<-e.next
			w.Write([]byte(e.half2 + "\n\n"))
		case "/compressed":
			q := r.URL.Query()
			coding := q.Get("coding")
			enc := compress(t, coding, []byte(e.compressedPlain()))
			w.Header().Set("Content-Encoding", coding)
			w.Header().Set("Content-Type", "application/json")
			if q.Get("stream") == "" {
				w.Header().Set("Content-Length", fmt.Sprint(len(enc)))
				w.Write(enc)
				return
			}
			for i := 0; i < len(enc); i += 7 {
				w.Write(enc[i:min(i+7, len(enc))])
				w.(http.Flusher).Flush()
			}
		case "/ws":
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			c.Write(r.Context(), typ, b)
			c.Read(r.Context())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// checkNoLeak runs every reader of the bundle at path and fails if any output
// holds secret in any spelling, or core (a piece of it) in any spelling.
func checkNoLeak(t *testing.T, path, secret, core string) {
	t.Helper()
	checkNoLeakOf(t, path, secret, core, nil)
}

// checkNoLeakOf is checkNoLeak that also looks for each of extra as it is
// (the pieces a secret was streamed in, and adjacent pieces joined).
func checkNoLeakOf(t *testing.T, path, secret, core string, extra []string) {
	t.Helper()
	outputs := map[string]string{"decompressed bundle": string(testkit.Decompress(t, path))}
	c, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Join the payloads of each connection and direction, so a secret held
	// in pieces by consecutive events is seen whole.
	joined := map[string]*strings.Builder{}
	for _, ev := range c.Events {
		k := ev.Conn + " " + string(ev.Dir)
		if joined[k] == nil {
			joined[k] = &strings.Builder{}
		}
		joined[k].Write(ev.Body.Data)
		for k, vs := range ev.Header {
			outputs["headers"] += k + ": " + strings.Join(vs, "\n") + "\n"
		}
		outputs["methods"] += ev.Method + "\n"
		outputs["urls"] += ev.URL + "\n"
	}
	for k, b := range joined {
		outputs["payloads of "+k] = b.String()
	}
	dir := t.TempDir()
	har, html := filepath.Join(dir, "x.har"), filepath.Join(dir, "x.html")
	for _, args := range [][]string{
		{"inspect", path}, {"inspect", "--full", path}, {"inspect", "--json", path}, {"inspect", "--calls", path},
		{"export", "--har", har, path}, {"report", "-o", html, path},
	} {
		code, stdout, stderr := runBin(t, args...)
		if code != exitOK {
			t.Fatalf("wireproof %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		outputs["wireproof "+strings.Join(args[:len(args)-1], " ")] = stdout + stderr
	}
	for _, f := range []string{har, html} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[filepath.Base(f)] = string(b)
	}
	var needles []string
	for _, sp := range spelling.Names {
		needles = append(needles, spelling.Spell(secret, sp), spelling.Spell(core, sp))
	}
	needles = append(needles, spelling.Base64Stable(secret)...)
	needles = append(needles, extra...)
	// Searched without regard to case (Go gives header names its own), and
	// again with the line breaks of wrapped base64 taken out.
	unwrap := strings.NewReplacer("\r", "", "\n", "", `\r`, "", `\n`, "")
	for name, out := range outputs {
		for _, o := range []string{out, unwrap.Replace(out)} {
			lo := strings.ToLower(o)
			for _, n := range needles {
				if i := strings.Index(lo, strings.ToLower(n)); i >= 0 {
					t.Errorf("%s holds %q: ...%s...", name, n, o[max(0, i-60):min(len(o), i+len(n)+60)])
				}
			}
		}
	}
}
