package playback

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestMissesAreBoundedAndRedacted: a client that floods playback with
// megabyte paths carrying a token gets a miss of bounded size that names
// no token, and the report and OnMiss keep the same: a report of such
// misses once made a 110 MB line that the reader refused, and stderr held
// the tokens.
func TestMissesAreBoundedAndRedacted(t *testing.T) {
	path := recordOK(t)
	const token = "tok-7f3a9c21e4b8d6a0b1c2"
	var mu sync.Mutex
	var told []Miss
	srv := startPlayback(t, path, &ServeOptions{Options: Options{OnMiss: func(m Miss) {
		mu.Lock()
		told = append(told, m)
		mu.Unlock()
	}}})
	long := "/" + strings.Repeat("p", 900<<10) + "?token=" + token
	for range 3 {
		res, err := http.Get(srv.URL + long)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d, want 404", res.StatusCode)
		}
		if len(body) > 4*maxMissText+1024 {
			t.Errorf("the miss's answer is %d bytes, want it bounded (a few times %d)", len(body), maxMissText)
		}
		if strings.Contains(string(body), token) {
			t.Errorf("the miss's answer holds the token")
		}
	}
	// ?token= after a long path is cut off; the same token early in a
	// short request is redacted.
	res, err := http.Get(srv.URL + "/b?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(body), token) || !strings.Contains(string(body), "[REDACTED]") {
		t.Errorf("the answer to /b?token=... does not redact the token:\n%s", body)
	}
	rep, err := srv.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 4 || len(rep.Misses) != 4 {
		t.Fatalf("%d misses told, %d in the report; want 4 each", len(told), len(rep.Misses))
	}
	for i, m := range append(told, rep.Misses...) {
		for _, s := range []string{m.Request, m.Closest, m.Diff, m.Reason} {
			if len(s) > maxMissText+32 {
				t.Errorf("miss %d: a text of %d bytes, want at most about %d", i, len(s), maxMissText)
			}
			if strings.Contains(s, token) {
				t.Errorf("miss %d holds the token: %.200s", i, s)
			}
		}
	}
	// The length is the redacted request's: the token is redacted first.
	if want := fmt.Sprintf("... (%d bytes)", len("GET "+long)-len(token)+len("[REDACTED]")); !strings.HasSuffix(told[0].Request, want) {
		t.Errorf("a cut request says how long it was: ...%s", told[0].Request[len(told[0].Request)-40:])
	}
}

// recordOK records one GET /a answered "ok" and returns the bundle's path.
func recordOK(t *testing.T) string {
	t.Helper()
	return recordSession(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), func(base string) {
		res, err := http.Get(base + "/a")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	})
}
