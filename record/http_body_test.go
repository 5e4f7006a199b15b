package record

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/redact"
)

// A streamed chunk that cannot begin a secret is relayed to the client and
// recorded before the upstream sends the next one: the upstream waits for the
// test's signal, which comes only once both happened. A chunk ending with a
// secret's first bytes is relayed at once too; only its recording waits for
// the chunk that decides it. In a server-sent event body the unit recorded
// is the event: an unfinished one waits for its blank line (its deltas are
// redacted joined, redact.EventStream).
func TestStreamChunkRecordedBeforeNext(t *testing.T) {
	for _, tc := range []struct {
		contentType string
		held        string // what is recorded of "data: sk-li" before the rest comes
	}{{"application/octet-stream", "data: "}, {"text/event-stream", ""}} {
		t.Run(tc.contentType, func(t *testing.T) {
			const secret = "sk-live-0123456789"
			next := make(chan struct{}, 3)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				for _, chunk := range []string{"data: one\n\n", "data: sk-li", "ve-0123456789\n\n"} {
					w.Write([]byte(chunk))
					w.(http.Flusher).Flush()
					<-next
				}
			}))
			defer up.Close()
			rc := startRecording(t, up.URL, &Options{Redact: []string{secret}})
			recorded := make(chan string, 16)
			rc.rec.Subscribe("test", SubscriberFunc(func(ev *bundle.Event) error {
				if ev.Kind == bundle.KindHTTPBody {
					recorded <- string(ev.Body.Data)
				}
				return nil
			}))
			res, err := http.Get(rc.URL + "/events")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			read := func(n int) string {
				b := make([]byte, n)
				if _, err := io.ReadFull(res.Body, b); err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			if got := read(len("data: one\n\n")); got != "data: one\n\n" {
				t.Fatalf("client read %q", got)
			}
			if got := <-recorded; got != "data: one\n\n" {
				t.Fatalf("recorded %q, want the first chunk whole before the next is sent", got)
			}
			next <- struct{}{} // the upstream may send the second chunk
			if got := read(len("data: sk-li")); got != "data: sk-li" {
				t.Fatalf("client read %q, want the chunk relayed before the next one", got)
			}
			if tc.held != "" {
				if got := <-recorded; got != tc.held {
					t.Fatalf("recorded %q, want only what cannot begin the secret", got)
				}
			}
			next <- struct{}{}
			next <- struct{}{}
			rest, _ := io.ReadAll(res.Body)
			if string(rest) != "ve-0123456789\n\n" {
				t.Errorf("client read %q", rest)
			}
			if got, want := <-recorded, strings.TrimPrefix("data: [REDACTED]\n\n", tc.held); got != want {
				t.Errorf("recorded %q once the rest came, want %q", got, want)
			}
			evs := rc.stop()
			var body strings.Builder
			for _, ev := range evs {
				if ev.Kind == bundle.KindHTTPBody {
					body.Write(ev.Body.Data)
				}
			}
			if want := "data: one\n\ndata: [REDACTED]\n\n"; body.String() != want {
				t.Errorf("recorded body %q, want %q", body.String(), want)
			}
		})
	}
}

// Compressed bodies are recorded decoded, noted in attrs, and relayed to the
// client byte for byte; corrupt ones are noted in http.end.
func TestProxyDecodesCompressedBodies(t *testing.T) {
	plain := []byte(`{"token":"abcdefgh12","text":"` + strings.Repeat("hello ", 3000) + `"}`)
	enc := map[string][]byte{}
	for _, c := range []string{"gzip", "deflate", "br", "zstd"} {
		var buf bytes.Buffer
		var w io.WriteCloser
		switch c {
		case "gzip":
			w = gzip.NewWriter(&buf)
		case "deflate":
			w = zlib.NewWriter(&buf)
		case "br":
			w = brotli.NewWriter(&buf)
		case "zstd":
			w, _ = zstd.NewWriter(&buf)
		}
		w.Write(plain)
		w.Close()
		enc[c] = buf.Bytes()
	}
	enc["corrupt"] = []byte("not gzip at all")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := strings.TrimPrefix(r.URL.Path, "/")
		b := enc[c]
		if c == "corrupt" {
			c = "gzip"
		}
		w.Header().Set("Content-Encoding", c)
		if r.URL.Query().Get("stream") == "" {
			w.Write(b) // small enough for a Content-Length
			return
		}
		for i := 0; i < len(b); i += 100 {
			w.Write(b[i:min(i+100, len(b))])
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	for _, c := range []string{"gzip", "deflate", "br", "zstd", "corrupt"} {
		for _, stream := range []string{"", "1"} {
			t.Run(c+"/stream="+stream, func(t *testing.T) {
				rc := startRecording(t, up.URL, nil)
				req, _ := http.NewRequest("GET", rc.URL+"/"+c+"?stream="+stream, nil)
				res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if !bytes.Equal(got, enc[c]) {
					t.Errorf("the client got %d bytes, want the upstream's %d unchanged", len(got), len(enc[c]))
				}
				var body []byte
				var attrs, endAttrs string
				for _, ev := range rc.stop() {
					switch ev.Kind {
					case bundle.KindHTTPBody:
						body = append(body, ev.Body.Data...)
						attrs = string(ev.Attrs)
					case bundle.KindHTTPEnd:
						endAttrs = string(ev.Attrs)
					}
				}
				if c == "corrupt" {
					var a struct{ DecodeError string }
					if json.Unmarshal([]byte(endAttrs), &a) != nil || !strings.Contains(a.DecodeError, "gzip") {
						t.Errorf("http.end attrs %q, want a decodeError naming gzip", endAttrs)
					}
					return
				}
				want := strings.Replace(string(plain), "abcdefgh12", redact.Redacted, 1)
				if string(body) != want {
					t.Errorf("recorded body (%d bytes) is not the decoded, redacted text (%d bytes)", len(body), len(want))
				}
				if wantAttrs := `{"decoded":"` + c + `"}`; attrs != wantAttrs {
					t.Errorf("body attrs %s, want %s", attrs, wantAttrs)
				}
			})
		}
	}
}

// A stdio line longer than MaxLineBytes is recorded in pieces; a secret that
// straddles the cut between two pieces is still redacted.
func TestTapLongLineSecretAcrossPieces(t *testing.T) {
	const secret = "tap-secret-0099887766"
	for _, off := range []int{5, 10, 15} {
		line := strings.Repeat("x", MaxLineBytes-off) + secret + strings.Repeat("y", 100) + "\n"
		rec := New(nil, &Options{Redact: []string{secret}})
		var got []string
		done := make(chan struct{})
		rec.Subscribe("t", SubscriberFunc(func(ev *bundle.Event) error {
			got = append(got, string(ev.Body.Data))
			return nil
		}))
		if _, err := io.Copy(io.Discard, TapReader(rec, "stdio", bundle.DirServerToClient, strings.NewReader(line))); err != nil {
			t.Fatal(err)
		}
		go func() { rec.Close(); close(done) }()
		<-done
		joined := strings.Join(got, "")
		if len(got) < 2 || strings.Contains(joined, secret[:8]) || strings.Contains(joined, secret[10:]) || !strings.Contains(joined, redact.Redacted) {
			t.Errorf("offset %d: %d pieces, joined holds a piece of the secret or no [REDACTED]", off, len(got))
		}
		if want := strings.Replace(line[:len(line)-1], secret, redact.Redacted, 1); joined != want {
			t.Errorf("offset %d: the pieces do not rebuild the redacted line", off)
		}
	}
}

// A server-sent event body cut by the body cap inside a delta: the events
// held before the cap are recorded, the tail of their text that could begin
// the secret dropped, and no piece of the secret reaches the recording; the
// client still gets every byte.
func TestEventStreamBodyCapDropsHeldTail(t *testing.T) {
	const secret = "sk-live-0123456789abcdefghij"
	ev := func(text string) string {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + text + "\"}}\n\n"
	}
	first, second := ev("ACK:"+secret[:12]), ev(secret[12:])
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(first))
		w.(http.Flusher).Flush()
		w.Write([]byte(second))
	}))
	defer up.Close()
	rc := startRecording(t, up.URL, &Options{Redact: []string{secret}, BodyCap: int64(len(first) + 20)})
	res, err := http.Get(rc.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(got) != first+second {
		t.Errorf("client read %q", got)
	}
	var body strings.Builder
	for _, e := range rc.stop() {
		if e.Kind == bundle.KindHTTPBody {
			body.Write(e.Body.Data)
		}
	}
	if want := ev("ACK:") + second[:20]; body.String() != want {
		t.Errorf("recorded body %q, want %q", body.String(), want)
	}
}
