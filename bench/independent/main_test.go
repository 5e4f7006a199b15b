package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.Main(m, &testkit.Options{Helpers: map[string]func() int{
		// httputil.ReverseProxy to the upstream named last, as the
		// program's -serve-reverseproxy child.
		"reverseproxy": func() int {
			if err := serveReverseProxy(os.Args[len(os.Args)-1]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			return 0
		},
		// A bare TCP relay to the upstream named last, as the program's
		// -serve-tcprelay child.
		"tcprelay": func() int {
			if err := serveTCPRelay(os.Args[len(os.Args)-1]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			return 0
		},
		// The sink, echo and JSON API, as the program's -serve-ends child.
		"ends": func() int {
			if err := serveUntilSignalled(endsHandler()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			return 0
		},
	}})
}

// TestOneRound runs a small round against a wireproof built from this tree,
// run as real processes: every figure is printed in the benchmark format
// bench/ratios reads, with a value, and each proxy's bundle holds every
// message and request of its phase, so the figures are of a recording that
// kept everything.
func TestOneRound(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "wireproof")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/wireproof").CombinedOutput(); err != nil {
		t.Fatalf("building wireproof: %v\n%s", err, out)
	}
	const messages, trips, requests = 300, 10, 40
	dir := t.TempDir()
	var out strings.Builder
	err := run(&out, round{wireproof: bin, dir: dir, messages: messages, trips: trips, requests: requests,
		reverseProxy: func(upstream string) (*exec.Cmd, error) { return testkit.HelperCommand("reverseproxy", upstream), nil },
		tcpRelay:     func(upstream string) (*exec.Cmd, error) { return testkit.HelperCommand("tcprelay", upstream), nil },
		ends:         func() (*exec.Cmd, error) { return testkit.HelperCommand("ends"), nil }})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	figures := map[string]string{
		"BenchmarkIndependentWSOneWay/direct":            "MB/s",
		"BenchmarkIndependentWSOneWay/recorded":          "proxy-cpu-ns/msg",
		"BenchmarkIndependentWSOneWay/inprocess":         "MB/s",
		"BenchmarkIndependentWSEcho/direct":              "p99-ns",
		"BenchmarkIndependentWSEcho/recorded":            "p99-ns",
		"BenchmarkIndependentWSEcho/reverseproxy":        "p99-ns",
		"BenchmarkIndependentWSEcho/tcprelay":            "p99-ns",
		"BenchmarkIndependentWSEcho/inprocess":           "p99-ns",
		"BenchmarkIndependentHTTPJSON/reverseproxy":      "proxy-cpu-ns/req",
		"BenchmarkIndependentHTTPJSON/recorded":          "proxy-cpu-ns/req",
		"BenchmarkIndependentHTTPJSON/recorded-distinct": "proxy-cpu-ns/req",
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+len(figures) || lines[0] != "goos: independent" {
		t.Fatalf("printed:\n%s\nwant a goos line and %d figures", out.String(), len(figures))
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		last, ok := figures[f[0]]
		if !ok || len(f) < 4 || f[1] != "1" || f[len(f)-1] != last {
			t.Errorf("line %q: want one of the figures, ending in %q", l, last)
			continue
		}
		delete(figures, f[0])
		if v, err := strconv.ParseFloat(f[2], 64); err != nil || v <= 0 {
			t.Errorf("line %q: its first figure is not a positive number", l)
		}
	}
	if len(figures) > 0 {
		t.Errorf("figures not printed: %v", figures)
	}

	count := func(name string, kind bundle.Kind, d bundle.Dir) int {
		t.Helper()
		c, err := bundle.ReadFile(filepath.Join(dir, name), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Truncated {
			t.Errorf("%s is truncated: %s", name, c.TruncatedReason)
		}
		n := 0
		for _, ev := range c.Events {
			if ev.Kind == kind && (d == "" || ev.Dir == d) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		file string
		kind bundle.Kind
		dir  bundle.Dir
		want int
	}{
		{"sink.zst", bundle.KindWSMessage, bundle.DirClientToServer, messages/blocks*blocks + blocks}, // and a "done" per block
		{"sink.zst", bundle.KindWSMessage, bundle.DirServerToClient, blocks},                          // the count per block
		{"echo.zst", bundle.KindWSMessage, bundle.DirClientToServer, 5 * trips},
		{"echo.zst", bundle.KindWSMessage, bundle.DirServerToClient, 5 * trips},
		{"http.zst", bundle.KindHTTPEnd, "", 2 * requests}, // repeated and distinct answers
	} {
		if got := count(c.file, c.kind, c.dir); got != c.want {
			t.Errorf("%s: %d %s %s events, want %d", c.file, got, c.dir, c.kind, c.want)
		}
	}
	// The distinct answers are all different: the repeated one and one per
	// request of the third way.
	c, err := bundle.ReadFile(filepath.Join(dir, "http.zst"), nil)
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]string{} // by exchange: a body may come in several chunks
	for _, ev := range c.Events {
		if ev.Kind == bundle.KindHTTPBody && ev.Dir == bundle.DirServerToClient {
			answers[ev.Conn] += string(ev.Body.Data)
		}
	}
	bodies := map[string]bool{}
	for _, a := range answers {
		bodies[a] = true
	}
	if len(bodies) != requests+1 {
		t.Errorf("http.zst: %d different answers, want %d (the repeated one and every distinct one)", len(bodies), requests+1)
	}
}
