package view

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
)

// rewrite writes the events of the bundle at from to a new bundle at to, in
// the current format, keeping their times.
func rewrite(t *testing.T, from, to string) {
	t.Helper()
	c, err := bundle.ReadFile(from, nil)
	if err != nil {
		t.Fatal(err)
	}
	var now int64
	w, err := bundle.Create(to, c.Header, &bundle.WriterOptions{Clock: func() int64 { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Events {
		ev := c.Events[i]
		now = ev.T
		if _, err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAPIDamagedBundle: a passing bundle with a bit flipped is listed as
// damaged, never as passed, and its page is 422 naming the damage; the same
// bundle intact is listed as passed.
func TestAPIDamagedBundle(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.zst")
	rewrite(t, filepath.Join(goldenLive, "idle.zst"), good)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x20
	if err := os.WriteFile(filepath.Join(dir, "flipped.zst"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, dir)
	var c CorpusResponse
	if code := getJSON(t, ts.URL+"/api/bundles", &c); code != 200 {
		t.Fatalf("status %d", code)
	}
	status := map[string]string{}
	for _, row := range c.Bundles {
		status[row.Name] = string(row.Status)
	}
	if status["good"] != "passed" || status["flipped"] != "damaged" {
		t.Errorf("rows %v, want good passed and flipped damaged", status)
	}
	var e struct{ Error string }
	if code := getJSON(t, ts.URL+"/api/bundle/flipped", &e); code != http.StatusUnprocessableEntity || !strings.Contains(e.Error, "flipped.zst is damaged") {
		t.Errorf("GET /api/bundle/flipped: %d %q, want 422 naming the damage", code, e.Error)
	}
}
