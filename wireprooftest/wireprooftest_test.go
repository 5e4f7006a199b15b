package wireprooftest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/wireprooftest"
)

// greeter is the real server of the example: it counts visits.
func greeter() *httptest.Server {
	var mu sync.Mutex
	visits := 0
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		visits++
		n := visits
		mu.Unlock()
		fmt.Fprintf(w, `{"greeting":"hello %s","visit":%d}`, r.URL.Query().Get("name"), n)
	}))
}

// useAPI is the code under test: a client of greeter.
func useAPI(t *testing.T, base string) []string {
	t.Helper()
	return greet(t, http.Get, base, "ada", "alan", "ada")
}

// greet asks the greeter at base to greet each name, with get, and returns
// its answers.
func greet(t *testing.T, get func(url string) (*http.Response, error), base string, names ...string) []string {
	t.Helper()
	var got []string
	for _, name := range names {
		res, err := get(base + "/greet?name=" + name)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		got = append(got, string(b))
	}
	return got
}

// recordGreeter records drive's traffic to a fresh greeter into path, in a
// subtest named record; the server is gone when it returns.
func recordGreeter(t *testing.T, path string, drive func(base string)) {
	t.Helper()
	t.Run("record", func(t *testing.T) {
		srv := greeter()
		defer srv.Close()
		drive(wireprooftest.Record(t, srv.URL, &wireprooftest.RecordOptions{Path: path}))
	})
}

// TestRecordThenPlayback records a test's traffic to an httptest server
// once, then plays it back with the server gone: the client sees the same
// answers, in the same order.
func TestRecordThenPlayback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "greeter.zst")
	var recorded []string
	recordGreeter(t, path, func(base string) { recorded = useAPI(t, base) })
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the bundle was not written: %v", err)
	}
	t.Run("playback", func(t *testing.T) {
		base := wireprooftest.Playback(t, path, nil)
		if got := useAPI(t, base); strings.Join(got, "\n") != strings.Join(recorded, "\n") {
			t.Errorf("played back:\n%s\nrecorded:\n%s", strings.Join(got, "\n"), strings.Join(recorded, "\n"))
		}
	})
	if !strings.Contains(recorded[2], `"visit":3`) {
		t.Errorf("recorded %q: want the third visit", recorded[2])
	}
}

// fakeTB is a testing.TB whose failures and logs are observed instead of
// failing the real test, and whose cleanups run when the test says so.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	failed   bool
	logs     []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}
func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}
func (f *fakeTB) Failed() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.failed }
func (f *fakeTB) log(s string) { f.mu.Lock(); defer f.mu.Unlock(); f.logs = append(f.logs, s) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.log(fmt.Sprintf(format, args...))
	f.mu.Lock()
	f.failed = true
	f.mu.Unlock()
}
func (f *fakeTB) Error(args ...any)                 { f.Errorf("%s", fmt.Sprint(args...)) }
func (f *fakeTB) Logf(format string, args ...any)   { f.log(fmt.Sprintf(format, args...)) }
func (f *fakeTB) Log(args ...any)                   { f.log(fmt.Sprint(args...)) }
func (f *fakeTB) Fatalf(format string, args ...any) { f.TB.Fatalf(format, args...) }

func TestPlaybackFailsOnMissAndUnplayed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "greeter.zst")
	recordGreeter(t, path, func(base string) { useAPI(t, base) })
	ft := &fakeTB{TB: t}
	base := wireprooftest.Playback(ft, path, nil)
	res, err := http.Get(base + "/greet?name=grace")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	ft.runCleanups()
	if !ft.failed {
		t.Fatal("a miss did not fail the test")
	}
	msg := strings.Join(ft.logs, "\n")
	for _, want := range []string{"GET /greet?name=grace", "closest recorded", "never played: http"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, msg)
		}
	}
}

func TestRecordKeepsBundleOfFailedTest(t *testing.T) {
	srv := greeter()
	defer srv.Close()
	ft := &fakeTB{TB: t}
	useAPI(t, wireprooftest.Record(ft, srv.URL, nil))
	ft.Errorf("the code under test failed")
	ft.runCleanups()
	var kept string
	for _, l := range ft.logs {
		if _, after, ok := strings.Cut(l, "wireproof inspect "); ok {
			kept = strings.TrimSpace(after)
		}
	}
	if kept == "" {
		t.Fatalf("no inspect command logged: %q", ft.logs)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(kept)) })
	if strings.HasPrefix(kept, t.TempDir()) {
		t.Errorf("bundle kept in the test's temporary directory %s, which goes with the test", kept)
	}
	c, err := bundle.ReadFile(kept, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range c.Events {
		if ev.Kind == bundle.KindHTTPRequest {
			n++
		}
	}
	if c.Truncated || n != 3 {
		t.Errorf("kept bundle: truncated %v, %d requests; want a complete bundle of 3", c.Truncated, n)
	}
}
