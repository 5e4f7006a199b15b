package wireprooftest_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/wireproof/wireproof/internal/spelling"
	"github.com/wireproof/wireproof/wireprooftest"
)

// TestRecordOnce: with no bundle, RecordOnce records against the real
// server; with one, it plays it back and the server is not needed (it is
// gone by then).
func TestRecordOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "greeter.zst")
	srv := greeter()
	upstream := srv.URL
	var recorded []string
	t.Run("first run records", func(t *testing.T) {
		recorded = useAPI(t, wireprooftest.RecordOnce(t, upstream, path, nil))
	})
	srv.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the first run wrote no bundle: %v", err)
	}
	if !strings.Contains(recorded[2], `"visit":3`) {
		t.Fatalf("recorded %q: want the server's third visit", recorded)
	}
	t.Run("next runs play back", func(t *testing.T) {
		got := useAPI(t, wireprooftest.RecordOnce(t, upstream, path, nil))
		if diff := cmp.Diff(recorded, got); diff != "" {
			t.Errorf("played back (-recorded +got):\n%s", diff)
		}
	})
}

// absoluteClient is code under test that builds the real server's URLs
// itself and takes only an *http.Client.
func absoluteClient(t *testing.T, c *http.Client) []string {
	t.Helper()
	return greet(t, c.Get, "https://greeter.example.com", "ada", "alan")
}

// TestRoundTripper: code that does not take a base URL is recorded and
// played back through the transport, its absolute URLs sent to the proxy
// and then to playback.
func TestRoundTripper(t *testing.T) {
	path := filepath.Join(t.TempDir(), "greeter.zst")
	var recorded []string
	recordGreeter(t, path, func(base string) {
		recorded = absoluteClient(t, &http.Client{Transport: wireprooftest.RoundTripper(base, nil)})
	})
	if len(recorded) != 2 || !strings.Contains(recorded[1], `"greeting":"hello alan","visit":2`) {
		t.Fatalf("recorded %q: want the server's answers", recorded)
	}
	t.Run("playback", func(t *testing.T) {
		base := wireprooftest.Playback(t, path, nil)
		got := absoluteClient(t, &http.Client{Transport: wireprooftest.RoundTripper(base, nil)})
		if diff := cmp.Diff(recorded, got); diff != "" {
			t.Errorf("played back (-recorded +got):\n%s", diff)
		}
	})
}

// TestMatchHook: a Match hook replaces the default comparison: here a
// request for another name is answered by the recorded exchange of the same
// path (the default would miss it), and the hook sees both requests whole.
func TestMatchHook(t *testing.T) {
	path := filepath.Join(t.TempDir(), "greeter.zst")
	recordGreeter(t, path, func(base string) { useAPI(t, base) })
	var seen []string
	match := func(rec, live *http.Request) bool {
		seen = append(seen, rec.Method+" "+rec.URL.RequestURI()+" ~ "+live.Method+" "+live.URL.RequestURI())
		return rec.Method == live.Method && rec.URL.Path == live.URL.Path
	}
	ft := &fakeTB{TB: t}
	base := wireprooftest.Playback(ft, path, &wireprooftest.PlaybackOptions{Match: match})
	got := greet(t, http.Get, base, "grace", "barbara", "edsger")
	ft.runCleanups()
	if ft.failed {
		t.Errorf("playback with the hook failed the test: %q", ft.logs)
	}
	want := []string{`{"greeting":"hello ada","visit":1}`, `{"greeting":"hello alan","visit":2}`, `{"greeting":"hello ada","visit":3}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-recorded in order +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"GET /greet?name=ada ~ GET /greet?name=grace", "GET /greet?name=alan ~ GET /greet?name=barbara", "GET /greet?name=ada ~ GET /greet?name=edsger"}, seen); diff != "" {
		t.Errorf("the hook saw (-want +got):\n%s", diff)
	}
}

// TestRedactRequestHook: a credential in a header of a name only this API
// uses is not redacted by name; returned by RedactRequest it is, in the
// request and wherever the server echoes it, in no spelling left in the
// decompressed bundle.
func TestRedactRequestHook(t *testing.T) {
	const secret = "acme-key-7f3c9e1d2b"
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"youSent":"`+r.Header.Get("X-Acme-Key")+`"}`)
	})
	srv := httptest.NewServer(echo)
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "acme.zst")
	var answer string
	t.Run("record", func(t *testing.T) {
		base := wireprooftest.Record(t, srv.URL, &wireprooftest.RecordOptions{Path: path,
			RedactRequest: func(r *http.Request) []string { return []string{r.Header.Get("X-Acme-Key")} }})
		req, _ := http.NewRequest("GET", base+"/whoami", nil)
		req.Header.Set("X-Acme-Key", secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		answer = string(b)
	})
	if !strings.Contains(answer, secret) {
		t.Fatalf("the client got %q: the hook must not change what it is sent", answer)
	}
	raw := decompressed(t, path)
	if !bytes.Contains(raw, []byte("/whoami")) || !bytes.Contains(raw, []byte("[REDACTED]")) {
		t.Fatalf("the bundle lacks the request or a redaction:\n%s", raw)
	}
	for _, name := range spelling.Names {
		if s := spelling.Spell(secret, name); bytes.Contains(raw, []byte(s)) {
			t.Errorf("the secret is in the bundle, spelled %s: %q", name, s)
		}
	}
	for _, s := range spelling.Base64Stable(secret) {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the secret is in the bundle in base64: %q", s)
		}
	}
}

// decompressed is the whole bundle file decompressed: every line, header
// and trailer included.
func decompressed(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	raw, err := io.ReadAll(d)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
