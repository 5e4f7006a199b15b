package testkit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	Main(m, &Options{Helpers: map[string]func() int{
		"echo": func() int {
			fmt.Println(strings.Join(os.Args[2:], " "))
			return 7
		},
		"sleep": func() int {
			time.Sleep(time.Hour)
			return 0
		},
		// spawn starts a sleeping helper, prints its pid and sleeps.
		"spawn": func() int {
			cmd := HelperCommand("sleep")
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Println(cmd.Process.Pid)
			time.Sleep(time.Hour)
			return 0
		},
	}})
}

func TestHelperCommand(t *testing.T) {
	var out bytes.Buffer
	cmd := HelperCommand("echo", "a", "b")
	cmd.Stdout = &out
	err := cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 7 || out.String() != "a b\n" {
		t.Errorf("helper: %v, stdout %q; want exit 7 and %q", err, out.String(), "a b\n")
	}
	cmd = HelperCommand("no-such-mode")
	if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("unknown mode: %v, want exit 2", err)
	}
}

// recorder is a testing.TB whose failures and cleanups are kept, so that a
// test can show CheckLeaks fails a leaking test.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) end() []string {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return r.errs
}

func TestCheckLeaksFindsAGoroutine(t *testing.T) {
	r := &recorder{TB: t}
	CheckLeaks(r)
	stop := make(chan struct{})
	go func() { <-stop }()
	go func() { time.Sleep(50 * time.Millisecond); close(stop) }() // ends by itself: waited for, not reported
	if errs := r.end(); len(errs) != 0 {
		t.Errorf("goroutines that end were reported: %q", errs)
	}

	r = &recorder{TB: t}
	CheckLeaks(r)
	block := make(chan struct{})
	defer close(block)
	go leakyGoroutine(block)
	shortSettle(t)
	errs := r.end()
	if len(errs) != 1 || !strings.Contains(errs[0], "leakyGoroutine") {
		t.Errorf("a leaked goroutine was reported as %q, want its stack", errs)
	}
}

// shortSettle makes the checks give up on what never ends in a second, not
// the settle time a loaded machine needs for what does.
func shortSettle(t *testing.T) {
	old := settleTime
	settleTime = time.Second
	t.Cleanup(func() { settleTime = old })
}

func leakyGoroutine(block chan struct{}) { <-block }

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	r := &recorder{TB: t}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("one\ntwo\n"), 0o644)
	Golden(r, path, []byte("one\ntwo\n"))
	Golden(r, path, []byte("one\nthree\n"))
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "three") {
		t.Errorf("Golden reported %q, want one diff", r.errs)
	}
}

// missingTB records how Missing ended a test.
type missingTB struct {
	testing.TB
	fatal, skip string
}

func (m *missingTB) Helper()           {}
func (m *missingTB) Fatal(args ...any) { m.fatal = fmt.Sprint(args...) }
func (m *missingTB) Skip(args ...any)  { m.skip = fmt.Sprint(args...) }

// TestMissing: a missing requirement skips, and fails instead when its
// environment variable is set.
func TestMissing(t *testing.T) {
	const env = "WIREPROOF_TEST_MISSING_REQUIRED"
	t.Setenv(env, "")
	var skipped missingTB
	Missing(&skipped, env, "no widget")
	if skipped.skip != "no widget" || skipped.fatal != "" {
		t.Errorf("without %s: skip %q, fatal %q; want a skip", env, skipped.skip, skipped.fatal)
	}
	t.Setenv(env, "1")
	var failed missingTB
	Missing(&failed, env, "no widget")
	if failed.skip != "" || !strings.Contains(failed.fatal, "no widget; "+env+" is set") {
		t.Errorf("with %s: skip %q, fatal %q; want a failure naming the variable", env, failed.skip, failed.fatal)
	}
}
