package testkit

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Options configure Main. A nil *Options means no helpers, no setup and only
// the goroutines every package may leave (ignored).
type Options struct {
	// Helpers are the helper modes of the package's tests: in a test binary
	// re-executed by HelperCommand(mode), Main calls Helpers[mode] instead
	// of running the tests, and exits with what it returns.
	Helpers map[string]func() int
	// Setup runs once before the tests, after flag.Parse (building a binary
	// the tests run, say). An error fails the test binary. The teardown it
	// returns, if any, runs after the tests and before the leak checks.
	Setup func() (teardown func(), err error)
	// IgnoreGoroutines are goleak options for goroutines the package's
	// tests leave running on purpose. Give each with a comment saying whose
	// goroutine it is and why it may outlive the tests.
	IgnoreGoroutines []goleak.Option
}

// settleTime bounds how long the leak checks wait for goroutines and
// processes to end after the tests: no event marks a goroutine's very end,
// so they poll. It is a hang guard, not a timing check; a loaded machine
// takes seconds to schedule a returning goroutine.
var settleTime = 60 * time.Second

// Main is a package's TestMain: testkit.Main(m, opts). It
//
//   - runs the helper mode the environment selects, if the binary was
//     started by HelperCommand, and exits;
//   - otherwise parses the flags, marks the environment so that every
//     process the tests start (and theirs) can be found, runs Setup and the
//     tests and the teardown;
//   - then, if the tests passed, fails the binary with goleak's report
//     (goleak.VerifyTestMain) if a goroutine is still running, and with a
//     list if a process the tests started is (which it then kills).
func Main(m *testing.M, o *Options) {
	if o == nil {
		o = &Options{}
	}
	if mode := os.Getenv(helperEnv); mode != "" {
		f := o.Helpers[mode]
		if f == nil {
			fmt.Fprintf(os.Stderr, "testkit: unknown helper mode %q\n", mode)
			os.Exit(2)
		}
		os.Exit(f())
	}
	flag.Parse()
	markProcesses()
	teardown := func() {}
	if o.Setup != nil {
		td, err := o.Setup()
		if err != nil {
			fmt.Fprintln(os.Stderr, "test setup:", err)
			os.Exit(1)
		}
		if td != nil {
			teardown = td
		}
	}
	s := &settled{m: m, teardown: teardown, opts: goroutineOptions(o.IgnoreGoroutines)}
	goleak.VerifyTestMain(s, append(s.opts, goleak.Cleanup(func(code int) {
		if len(s.left) > 0 {
			fmt.Fprintf(os.Stderr, "testkit: processes the tests started were still running (killed):\n%s", describe(s.left))
			code = 1
		}
		os.Exit(code)
	}))...)
}

// settled runs the tests and the teardown, then waits for the processes the
// tests started to end (a goroutine waiting for one ends with it) and for
// the goroutines, before goleak.VerifyTestMain looks for those that did not.
type settled struct {
	m        *testing.M
	teardown func()
	opts     []goleak.Option
	left     []proc // processes still running after settleTime
}

func (s *settled) Run() int {
	code := s.m.Run()
	s.teardown()
	if code == 0 {
		s.left = waitProcesses(nil)
		waitGoroutines(s.opts) // VerifyTestMain reports what is left
	}
	return code
}

// goroutineOptions are the options of every goleak check: the package's
// own. goleak itself ignores the testing package's goroutines and those of
// os/signal; every other goroutine left is a leak unless a package says why.
func goroutineOptions(extra []goleak.Option) []goleak.Option {
	return append([]goleak.Option(nil), extra...)
}

// waitGoroutines waits until no goroutine but those opts ignore runs, or
// settleTime passed, and returns goleak's last report.
func waitGoroutines(opts []goleak.Option) error {
	deadline := time.Now().Add(settleTime)
	for {
		// Idle keep-alive connections of the default client belong to
		// no test; closing them ends their two goroutines.
		http.DefaultClient.CloseIdleConnections()
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// CheckLeaks fails t if a goroutine started during the test (after the
// call), or a process it started, is still running when the test ends,
// after its other cleanups (call it first). ignore are goleak options for
// goroutines the test may leave. Tests that use it must not be parallel.
func CheckLeaks(t testing.TB, ignore ...goleak.Option) {
	t.Helper()
	opts := append(goroutineOptions(ignore), goleak.IgnoreCurrent())
	before := map[int]bool{}
	for _, p := range descendants() {
		before[p.pid] = true
	}
	t.Cleanup(func() {
		// Processes first: a goroutine waiting for one ends with it.
		if left := waitProcesses(before); len(left) > 0 {
			t.Errorf("processes the test started are still running (killed now):\n%s", describe(left))
		}
		if err := waitGoroutines(opts); err != nil {
			t.Errorf("goroutines outlived the test: %v", err)
		}
	})
}
