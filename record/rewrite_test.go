package record

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/spelling"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/redact"
)

// TestLearnedSecretRedactedFromWhatCameBefore: a token that stands on the
// recorded command line (the manifest and proc.start, written first) and is
// learned only later from traffic (subject_token) is in no spelling in the
// closed bundle; every event keeps its seq, time and kind.
func TestLearnedSecretRedactedFromWhatCameBefore(t *testing.T) {
	testkit.CheckLeaks(t)
	const token = "boot-7f3a9c21e4b8"
	path := filepath.Join(t.TempDir(), "run.zst")
	argv := []string{"client", "--bootstrap", token}
	w, err := bundle.Create(path, bundle.Header{Tool: "test", Manifest: bundle.Manifest{Commands: [][]string{argv}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := New(w, &Options{File: path})
	emit := func(ev bundle.Event) {
		t.Helper()
		if _, err := rec.Emit(&ev); err != nil {
			t.Fatal(err)
		}
	}
	emit(bundle.Event{Kind: bundle.KindProcStart, Conn: "client", Body: bundle.Text([]byte(`{"argv":["client","--bootstrap","` + token + `"]}`))})
	emit(bundle.Event{Kind: bundle.KindProcLog, Conn: "client", Type: bundle.TypeStdout, Body: bundle.Text([]byte("using " + spelling.Spell(token, "pct-upper")))})
	emit(bundle.Event{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "POST", URL: "/oauth/token"})
	emit(bundle.Event{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirClientToServer, Body: bundle.Text([]byte("grant_type=x&subject_token=" + token))})
	emit(bundle.Event{Kind: bundle.KindProcLog, Conn: "client", Type: bundle.TypeStdout, Body: bundle.Text([]byte("later " + token))})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	raw := testkit.Decompress(t, path)
	for _, sp := range spelling.Names {
		if s := spelling.Spell(token, sp); sp != "html" && bytes.Contains(raw, []byte(s)) {
			t.Errorf("the token (%s spelling %q) is in the bundle:\n%s", sp, s, raw)
		}
	}
	c, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Header.Manifest.Commands[0], " "); got != "client --bootstrap "+redact.Redacted {
		t.Errorf("manifest command %q", got)
	}
	if c.Truncated || len(c.Events) != 5 {
		t.Fatalf("%d events, truncated %v", len(c.Events), c.Truncated)
	}
	for i, ev := range c.Events {
		if ev.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d", i, ev.Seq)
		}
	}
	if c.Events[0].Kind != bundle.KindProcStart || !strings.Contains(string(c.Events[0].Body.Data), redact.Redacted) {
		t.Errorf("proc.start %s", c.Events[0].Body.Data)
	}
}

// TestNothingLearnedNothingRewritten: without a secret learned the file is
// left as written.
func TestNothingLearnedNothingRewritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "test", Manifest: bundle.Manifest{Commands: [][]string{{"a", "plain-arg-123456"}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := New(w, &Options{File: path})
	if _, err := rec.Emit(&bundle.Event{Kind: bundle.KindMark, Name: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(testkit.Decompress(t, path), []byte("plain-arg-123456")) {
		t.Error("an argument that is no secret was redacted")
	}
}
