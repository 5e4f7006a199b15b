package view

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// FuzzEventsQuery: any query string gets an answer (200, or 400 naming the
// bad parameter), never a panic or a 500.
func FuzzEventsQuery(f *testing.F) {
	for _, q := range []string{"", "from=10&limit=5", "around=68", "kind=http&status=2xx", "status=4", "q=%FF", "limit=99999999999999999999", "outcome=failure&method=POST&conn=ws1"} {
		f.Add(q)
	}
	srcs, err := Resolve([]string{filepath.Join(goldenLive, "idle.zst")}, nil)
	if err != nil {
		f.Fatal(err)
	}
	s := New(context.Background(), srcs, nil)
	f.Fuzz(func(t *testing.T, q string) {
		req := httptest.NewRequest("GET", "/api/bundle/idle/events", nil)
		req.URL.RawQuery = q
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("%q: status %d: %s", q, w.Code, w.Body)
		}
	})
}

// FuzzResults: a results.json of any content is read or refused with an
// error, never a panic.
func FuzzResults(f *testing.F) {
	f.Add([]byte(`[{"iteration":1,"scenario":"idle","status":"passed","bundle":"idle-1.zst"}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{`))
	f.Add([]byte(`[{"bundle":""},{"bundle":"/abs/x.zst"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "results.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		srcs, err := Resolve([]string{p}, nil)
		if err == nil && len(srcs) == 0 {
			t.Fatal("no error and no bundles")
		}
	})
}
