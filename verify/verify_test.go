package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/fixtures"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/provider/claude"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/verify"
)

// runOnce runs one scenario in process against the embedded fixture server and
// checks what every run must leave behind: a readable, cleanly closed bundle
// whose verdict replay reproduces, no temporary directory and no live server.
func runOnce(t *testing.T, opts verify.Options) *verify.Result {
	t.Helper()
	return runOnceCtx(t, context.Background(), opts)
}

// runOnceCtx is runOnce under ctx.
func runOnceCtx(t *testing.T, ctx context.Context, opts verify.Options) *verify.Result {
	t.Helper()
	// Nothing the run starts outlives the test: no goroutine, no process.
	testkit.CheckLeaks(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the run's home and project must not outlive it
	if opts.RepoDir == "" {
		// Not this checkout: its working-tree patch (a developer's edits,
		// token-field names in Go source among them) would become an
		// artifact and the checks below would judge it. The patch artifact
		// has its own tests (workspace_test.go).
		opts.RepoDir = tmp
	}
	var mu sync.Mutex
	var pids []int
	hooks := opts.Hooks
	opts.Hooks = &verify.Hooks{
		ServerStarted: func(pid int) {
			mu.Lock()
			pids = append(pids, pid)
			mu.Unlock()
			if hooks != nil && hooks.ServerStarted != nil {
				hooks.ServerStarted(pid)
			}
		},
	}
	var secrets []string
	opts.Hooks.Secret = func(s string) {
		mu.Lock()
		secrets = append(secrets, s)
		mu.Unlock()
		if hooks != nil && hooks.Secret != nil {
			hooks.Secret(s)
		}
	}
	if hooks != nil {
		opts.Hooks.Phase = hooks.Phase
	}
	opts.Executable = wireproofBin
	if opts.OutDir == "" {
		opts.OutDir = filepath.Join(t.TempDir(), "out")
	}
	if opts.Timeout == 0 {
		opts.Timeout = 60 * time.Second
	}
	res, err := verify.Run(ctx, opts)
	if err != nil {
		t.Fatalf("verify.Run: %v", err)
	}

	// Nothing is left once Run returns: no temp directory, no server
	// process, no listening port.
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary entries left behind: %v", names(left))
	}
	mu.Lock()
	for _, pid := range pids {
		if testkit.ProcessExists(pid) {
			t.Errorf("server process %d still running", pid)
		}
	}
	mu.Unlock()
	hdr, events := readBundle(t, res.Bundle)
	if port := hdr.Manifest.Options["port"]; port != "" {
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			t.Errorf("server port %s still accepts connections", port)
		}
	}

	// No credential of the run reached the disk: search the decompressed bundle.
	raw := testkit.Decompress(t, res.Bundle)
	mu.Lock()
	if len(secrets) == 0 {
		t.Error("the run reported no credentials to look for")
	}
	for _, s := range secrets {
		checkSecretSpellings(t, raw, s)
	}
	mu.Unlock()
	checkTokenFields(t, events)

	// The verdict file, the bundle's verdict event and replay agree.
	var fileVerdict assert.Verdict
	b, err := os.ReadFile(res.VerdictFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(res.VerdictFile); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("the verdict file's mode is %v, want 0600 like the bundle", fi.Mode().Perm())
	}
	if err := json.Unmarshal(b, &fileVerdict); err != nil {
		t.Fatalf("verdict file: %v", err)
	}
	if diff := cmp.Diff(res.Verdict, fileVerdict); diff != "" {
		t.Errorf("verdict file differs from the run's verdict (-run +file):\n%s", diff)
	}
	if events[len(events)-1].Kind != bundle.KindVerdict {
		t.Errorf("last event is %s, want the verdict", events[len(events)-1].Kind)
	}
	rep, err := replay.ReplayFile(context.Background(), res.Bundle, delivery.Options(nil))
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if !rep.Reproduced {
		t.Errorf("replay diverged from the live verdict:\n%s", rep.Diff)
	}
	for _, bad := range interruptsOfAnsweredRequests(events) {
		t.Errorf("the driver interrupted an answered request: %s", bad)
	}
	// The driver's own traffic decodes cleanly: no message without its call.
	// The provider's stream-json does too, except the one line a provider
	// told to write a malformed line writes: replay reports exactly that.
	malformed := 0
	for _, d := range rep.DecodeErrors {
		if opts.Fault == claude.FaultMalformedLine && isInjectedMalformedLine(events, d) {
			malformed++
			continue
		}
		t.Errorf("undecodable @%d %s: %s", d.Seq, d.Conn, d.Err)
	}
	if want := map[bool]int{true: 1}[opts.Fault == claude.FaultMalformedLine]; malformed != want || rep.DecodeErrorCount != len(rep.DecodeErrors) {
		t.Errorf("%d decode errors on provider channels (%d in all), want %d", malformed, rep.DecodeErrorCount, want)
	}
	if diff := cmp.Diff(res.Verdict, rep.Verdict); diff != "" {
		t.Errorf("replayed verdict (-live +replay):\n%s", diff)
	}
	return res
}

// isInjectedMalformedLine reports whether decode error d is the line
// FaultMalformedLine makes a provider write, and nothing else: a stdout line
// of a provider channel whose text is exactly claude.MalformedLine, the line
// the error is at and quotes.
func isInjectedMalformedLine(events []bundle.Event, d replay.DecodeError) bool {
	if !strings.HasPrefix(d.Conn, "provider-") || d.Raw != claude.MalformedLine {
		return false
	}
	for i := range events {
		ev := &events[i]
		if ev.Seq == d.Seq {
			return ev.Kind == bundle.KindStdioLine && ev.Conn == d.Conn && ev.Dir == bundle.DirServerToClient &&
				string(ev.Body.Data) == claude.MalformedLine
		}
	}
	return false
}

// TestInjectedMalformedLine: runOnce's exemption under provider-malformed-line
// covers the injected line only, not any provider decode error.
func TestInjectedMalformedLine(t *testing.T) {
	line := func(seq uint64, conn string, dir bundle.Dir, text string) bundle.Event {
		return bundle.Event{Seq: seq, Kind: bundle.KindStdioLine, Conn: conn, Dir: dir, Body: bundle.Text([]byte(text))}
	}
	other := `{"type":"result","subtype":"success","result":`
	events := []bundle.Event{
		line(1, "provider-1", bundle.DirClientToServer, claude.MalformedLine), // stdin, not the provider's output
		line(2, "provider-1", bundle.DirServerToClient, claude.MalformedLine),
		line(3, "provider-2", bundle.DirServerToClient, other),
		{Seq: 4, Kind: bundle.KindWSMessage, Conn: "provider-3", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(claude.MalformedLine))},
	}
	for _, tc := range []struct {
		name string
		d    replay.DecodeError
		want bool
	}{
		{"the injected line", replay.DecodeError{Seq: 2, Conn: "provider-1", Raw: claude.MalformedLine}, true},
		{"another malformed provider line", replay.DecodeError{Seq: 3, Conn: "provider-2", Raw: other}, false},
		{"the right text at another seq", replay.DecodeError{Seq: 3, Conn: "provider-2", Raw: claude.MalformedLine}, false},
		{"the line on the provider's stdin", replay.DecodeError{Seq: 1, Conn: "provider-1", Raw: claude.MalformedLine}, false},
		{"not a stdio line", replay.DecodeError{Seq: 4, Conn: "provider-3", Raw: claude.MalformedLine}, false},
		{"another channel", replay.DecodeError{Seq: 2, Conn: "ws1", Raw: claude.MalformedLine}, false},
		{"no such event", replay.DecodeError{Seq: 9, Conn: "provider-1", Raw: claude.MalformedLine}, false},
	} {
		if got := isInjectedMalformedLine(events, tc.d); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func names(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func readBundle(t *testing.T, path string) (bundle.Header, []bundle.Event) {
	t.Helper()
	c, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatalf("read bundle: %v", err)
	}
	if c.Truncated {
		t.Errorf("bundle %s is truncated: %s", path, c.TruncatedReason)
	}
	return c.Header, c.Events
}

// readResults reads a suite's results.json in dir.
func readResults(t *testing.T, dir string) []verify.SuiteEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []verify.SuiteEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	return entries
}

// readVerdict reads a verdict file.
func readVerdict(t *testing.T, path string) assert.Verdict {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v assert.Verdict
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestScenariosPass(t *testing.T) {
	for _, sc := range verify.Scenarios {
		t.Run(string(sc), func(t *testing.T) {
			res := runOnce(t, verify.Options{Scenario: sc})
			v := res.Verdict
			if v.Status != assert.StatusPassed || v.Restart != assert.StatusPassed {
				t.Fatalf("status %s restart %s, failure %+v", v.Status, v.Restart, v.Failure)
			}
			wantRuns := 2
			if sc == "active" {
				wantRuns = 1
			}
			if v.RunCount != wantRuns {
				t.Errorf("run count %d, want %d", v.RunCount, wantRuns)
			}
			if len(v.AcknowledgementIDs) != 1 {
				t.Errorf("acknowledgement ids %v, want one", v.AcknowledgementIDs)
			}
		})
	}
}

// An idle run with the ndjson serialization: the embedded fixture server is
// told it in the bootstrap and the driver's socket speaks it, so a mismatch on
// either side would stall the run. runOnce checks replay decodes it cleanly.
func TestNDJSONSerialization(t *testing.T) {
	res := runOnce(t, verify.Options{Scenario: "idle", Serialization: "ndjson"})
	if v := res.Verdict; v.Status != assert.StatusPassed || v.Restart != assert.StatusPassed {
		t.Fatalf("status %s restart %s, failure %+v", v.Status, v.Restart, v.Failure)
	}
	hdr, events := readBundle(t, res.Bundle)
	if got := hdr.Manifest.Options["serialization"]; got != "ndjson" {
		t.Errorf("manifest serialization %q, want ndjson", got)
	}
	// Every RPC message in both directions is a newline-terminated line.
	perDir := map[bundle.Dir]int{}
	for i := range events {
		ev := &events[i]
		if ev.Kind != bundle.KindWSMessage {
			continue
		}
		perDir[ev.Dir]++
		if !bytes.HasSuffix(ev.Body.Data, []byte("\n")) {
			t.Errorf("@%d %s message %q does not end with a newline", ev.Seq, ev.Dir, ev.Body.Data)
		}
	}
	if perDir[bundle.DirClientToServer] == 0 || perDir[bundle.DirServerToClient] == 0 {
		t.Errorf("WebSocket messages per direction %v, want both directions", perDir)
	}
}

func TestFailGateNamesTheFailedChild(t *testing.T) {
	res := runOnce(t, verify.Options{Scenario: "idle", FailGate: true})
	f := res.Verdict.Failure
	if res.Verdict.Status != assert.StatusFailed || f == nil {
		t.Fatalf("verdict %+v, want a failure", res.Verdict)
	}
	if f.Check != assert.CheckTerminalChildSecret {
		t.Errorf("failing check %q, want %q (%s)", f.Check, assert.CheckTerminalChildSecret, f.Message)
	}
}

// Every fault mode of the fixture server fails live with the check it is
// meant to trip, and replay names the same check at the same seq.
func TestFaultModesFailLive(t *testing.T) {
	for _, fault := range fixtures.Faults {
		t.Run(fault.Name, func(t *testing.T) {
			opts := verify.Options{Scenario: "idle", Fault: fault.Name}
			if fault.Check == assert.CheckDeadline {
				opts.Timeout = 2 * time.Second // the fault hangs the run until the deadline
			}
			res := runOnce(t, opts)
			f := res.Verdict.Failure
			if f == nil {
				t.Fatalf("fault %s passed, want check %s to fail", fault.Name, fault.Check)
			}
			if f.Check != fault.Check {
				t.Errorf("fault %s tripped %q (%s), want %q", fault.Name, f.Check, f.Message, fault.Check)
			}
		})
	}
}

func TestServerKilledMidRun(t *testing.T) {
	var pid int
	res := runOnce(t, verify.Options{
		Scenario: "idle",
		Fault:    fixtures.FaultStalledParent, // the agent never finishes: the kill lands mid-run
		Hooks: &verify.Hooks{
			ServerStarted: func(p int) { pid = p },
			Phase: func(phase replay.Phase) {
				if phase == replay.PhaseRunning {
					testkit.KillProcess(pid)
				}
			},
		},
	})
	f := res.Verdict.Failure
	if f == nil || f.Check != assert.CheckServerAlive {
		t.Fatalf("failure %+v, want check %s", f, assert.CheckServerAlive)
	}
	if !strings.Contains(f.Seen, "SIGKILL") && !strings.Contains(f.Seen, "killed") {
		t.Errorf("failure does not say how the server died: %+v", f)
	}
	_, events := readBundle(t, res.Bundle)
	if ev := eventAt(events, f.Seq); ev == nil || ev.Kind != bundle.KindProcExit {
		t.Errorf("failure points at seq %d (%v), want the server's exit", f.Seq, ev)
	}
}

func TestDeadline(t *testing.T) {
	res := runOnce(t, verify.Options{Scenario: "idle", Fault: fixtures.FaultStalledParent, Timeout: 2 * time.Second})
	f := res.Verdict.Failure
	if f == nil || f.Check != assert.CheckDeadline {
		t.Fatalf("verdict %+v, want check %s", res.Verdict, assert.CheckDeadline)
	}
	if !strings.Contains(f.Seen, "expired while running the scenario") {
		t.Errorf("seen %q, want it to say the run was running the scenario", f.Seen)
	}
}

// A server that never becomes ready: the deadline says the server was still
// starting, not that the run was "in phase running".
func TestDeadlineWhileStarting(t *testing.T) {
	// The comment sign drops the start arguments verify appends.
	res := runOnce(t, verify.Options{Scenario: "idle", ServerCmd: "sleep 60 #", Timeout: 2 * time.Second})
	f := res.Verdict.Failure
	if f == nil || f.Check != assert.CheckDeadline {
		t.Fatalf("verdict %+v, want check %s", res.Verdict, assert.CheckDeadline)
	}
	if !strings.Contains(f.Seen, "expired while starting the server") {
		t.Errorf("seen %q, want it to say the server was still starting", f.Seen)
	}
}

func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts verify.Options
	}{
		{"scenario", verify.Options{Scenario: "busy"}},
		{"repeat", verify.Options{Scenario: "idle", Repeat: -1}},
		{"timeout", verify.Options{Scenario: "idle", Timeout: -time.Second}},
		{"serialization", verify.Options{Scenario: "idle", Serialization: "cbor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			tc.opts.OutDir = out
			_, err := verify.Run(context.Background(), tc.opts)
			var oe *verify.OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("error %v, want an OptionError", err)
			}
			if left, _ := os.ReadDir(out); len(left) > 0 {
				t.Errorf("a bad option still started a run: %v", names(left))
			}
		})
	}
}

// The README's main command: every scenario against the embedded fixture
// server, as a user runs it, through the real binary and its suite children.
func TestSuiteCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "evidence")
	cmd := exec.Command(wireproofBin, "verify", "--out", out)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("wireproof verify: %v\n%s", err, stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(out, "results.json")); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("results.json's mode is %v, want 0600 like the bundle", fi.Mode().Perm())
	}
	var entries []verify.SuiteEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, string(e.Scenario)+" "+string(e.Status))
	}
	want := []string{"idle passed", "active passed", "native passed", "nested passed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results.json (-want +got):\n%s\noutput:\n%s", diff, stdout.String())
	}
	// Each run is announced as which of the suite's runs it is.
	for i, sc := range verify.Scenarios {
		if line := fmt.Sprintf("Run %d/4: %s (iteration 1/1)\n", i+1, sc); !strings.Contains(stdout.String(), line) {
			t.Errorf("the suite did not announce %q:\n%s", line, stdout.String())
		}
	}
	rep := exec.Command(wireproofBin, "replay", out)
	repOut, err := rep.CombinedOutput()
	if err != nil {
		t.Fatalf("wireproof replay: %v\n%s", err, repOut)
	}
	if n := strings.Count(string(repOut), "reproduced"); n != 4 {
		t.Errorf("replay reproduced %d of 4 verdicts:\n%s", n, repOut)
	}
}

// A suite passes --serialization on to its children: each run's manifest
// records ndjson and every run passes.
func TestSuiteForwardsSerialization(t *testing.T) {
	out := filepath.Join(t.TempDir(), "evidence")
	cmd := exec.Command(wireproofBin, "verify", "--scenario", "idle", "--repeat", "2", "--serialization", "ndjson", "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("wireproof verify: %v\n%s", err, b)
	}
	var got []string
	for _, name := range []string{"idle-1.zst", "idle-2.zst"} {
		hdr, _ := readBundle(t, filepath.Join(out, name))
		got = append(got, name+" "+hdr.Manifest.Options["serialization"])
	}
	want := []string{"idle-1.zst ndjson", "idle-2.zst ndjson"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest serializations (-want +got):\n%s", diff)
	}
}

// TestUsageErrorsExit2: bad flags exit 2. An --out that already holds a
// bundle is an output not written, exit 6 (TestRunRefusesAnExistingBundle,
// and cmd/wireproof's TestVerifyRefusesAnExistingBundle).
func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"verify", "--scenario", "busy"},
		{"verify", "--timeout", "-1"},
		{"verify", "--repeat", "0"},
		{"verify", "--no-such-flag"},
		{"verify", "--fault", "no-such-fault"},
		{"verify", "--serialization", "cbor"},
		{"verify", "--scenario", "idle", "--provider", "codex"}, // no scripted Codex: it needs --provider-cli
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			cmd := exec.Command(wireproofBin, args...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("exit %v, want 2\n%s", err, out)
			}
			if !bytes.Contains(out, []byte("invalid")) && !bytes.Contains(out, []byte("unknown")) {
				t.Errorf("message does not say what was wrong: %s", out)
			}
		})
	}
}

// SIGINT mid-run: the bundle closes cleanly, no server is left, exit 130.
func TestInterruptClosesBundle(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command(wireproofBin, "verify", "--scenario", "idle", "--fault", fixtures.FaultStalledParent, "--out", out)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bundlePath := filepath.Join(out, "idle-1.zst")
	serverPid := waitForRunning(t, bundlePath)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, output.String())
	}
	if testkit.ProcessExists(serverPid) {
		t.Errorf("server %d left running after the interrupt", serverPid)
	}
	_, events := readBundle(t, bundlePath)
	var v assert.Verdict
	if err := json.Unmarshal(events[len(events)-1].Body.Data, &v); err != nil {
		t.Fatalf("last event is not a verdict: %v", err)
	}
	if v.Failure == nil || v.Failure.Check != assert.CheckInterrupted {
		t.Errorf("failure %+v, want check %s", v.Failure, assert.CheckInterrupted)
	}
}

func eventAt(events []bundle.Event, seq uint64) *bundle.Event {
	for i := range events {
		if events[i].Seq == seq {
			return &events[i]
		}
	}
	return nil
}

// waitForRunning polls the growing bundle (it is flushed every 100 ms) until
// the driver is in the running phase, and returns the server's pid.
func waitForRunning(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		pid, running := scanRunning(path)
		if running {
			return pid
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the run never reached the running phase")
	return 0
}

func scanRunning(path string) (pid int, running bool) {
	r, err := bundle.Open(path, nil)
	if err != nil {
		return 0, false
	}
	defer r.Close()
	for {
		var ev bundle.Event
		if r.Next(&ev) != nil {
			return pid, running
		}
		switch {
		case ev.Kind == bundle.KindProcStart:
			var attrs struct{ Pid int }
			json.Unmarshal(ev.Attrs, &attrs)
			pid = attrs.Pid
		case ev.Kind == bundle.KindMark && ev.Name == replay.MarkPhase && bytes.Contains(ev.Body.Data, []byte(replay.PhaseRunning)):
			running = true
		}
	}
}

// SIGINT to a suite is forwarded to the running child: its bundle closes with
// an interrupted verdict, results.json says so, no later scenario starts, and
// the suite exits 130.
func TestSuiteForwardsInterrupt(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command(wireproofBin, "verify", "--fault", fixtures.FaultStalledParent, "--out", out)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serverPid := waitForRunning(t, filepath.Join(out, "idle-1.zst"))
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, output.String())
	}
	if testkit.ProcessExists(serverPid) {
		t.Errorf("server %d left running after the interrupt", serverPid)
	}
	entries := readResults(t, out)
	// Every suite's status stands in the entry; the failure's seq and time
	// depend on the moment of the signal, so only the check is compared.
	var suites []string
	for i := range entries {
		for _, s := range entries[i].Suites {
			line := string(s.Suite) + " " + string(s.Status)
			if s.Failure != nil {
				line += " " + string(s.Failure.Check)
			}
			suites = append(suites, line)
		}
		entries[i].Suites = nil
	}
	if diff := cmp.Diff([]string{"background-delivery failed interrupted", "protocol-conformance passed"}, suites); diff != "" {
		t.Errorf("results.json suites (-want +got):\n%s", diff)
	}
	want := []verify.SuiteEntry{{
		Iteration: 1, Scenario: "idle", Status: "interrupted", ExitCode: 130,
		Bundle: filepath.Join(out, "idle-1.zst"), Verdict: filepath.Join(out, "idle-1.verdict.json"),
		Check: assert.CheckInterrupted,
	}}
	if diff := cmp.Diff(want, entries); diff != "" {
		t.Errorf("results.json (-want +got):\n%s\noutput:\n%s", diff, output.String())
	}
	readBundle(t, filepath.Join(out, "idle-1.zst")) // closed cleanly: not truncated
}

// --keep-workspace keeps the server's home (its database) and the project for
// a person to look at; without it nothing of the run is left but the evidence.
func TestKeepWorkspace(t *testing.T) {
	res := runOnce(t, verify.Options{Scenario: "idle", KeepWorkspace: true})
	if res.Workspace == "" {
		t.Fatal("no workspace reported")
	}
	if _, err := os.Stat(filepath.Join(res.Workspace, "home", "userdata", "state.sqlite")); err != nil {
		t.Errorf("the server's database was not kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(res.Workspace, "project", ".git")); err != nil {
		t.Errorf("the project was not kept: %v", err)
	}
}

// A server that exits before its ready line fails server-alive, and says it
// never became ready; the result carries its last output (stdout and
// stderr), the bootstrap token it was given redacted.
func TestServerDiesBeforeReady(t *testing.T) {
	res := runOnce(t, verify.Options{Scenario: "idle", ServerCmd: "sh -c 'echo starting; echo config missing: /etc/t3 >&2; cat <&3 >&2; echo >&2; exit 4' #"})
	// stdout and stderr are read apart: their lines' order is not fixed.
	out := strings.Join(res.ServerOutput, "\n")
	if len(res.ServerOutput) != 3 || !slices.Contains(res.ServerOutput, "starting") || !slices.Contains(res.ServerOutput, "config missing: /etc/t3") {
		t.Errorf("server output %q, want its three lines", res.ServerOutput)
	}
	if !strings.Contains(out, `"desktopBootstrapToken":"[REDACTED]"`) {
		t.Errorf("the bootstrap it printed is not there redacted:\n%s", out)
	}
	f := res.Verdict.Failure
	if f == nil || f.Check != assert.CheckServerAlive {
		t.Fatalf("failure %+v, want %s", f, assert.CheckServerAlive)
	}
	for _, want := range []string{"exit code 4", "before it became ready"} {
		if !strings.Contains(f.Seen, want) {
			t.Errorf("seen %q does not say %q", f.Seen, want)
		}
	}
}

// A server that never prints its ready line, under a --timeout shorter
// than ReadyTimeout: the run's deadline ends the wait, and the result still
// carries what the server printed, as it does at ReadyTimeout.
func TestServerNeverReadyWithinTimeout(t *testing.T) {
	res := runOnce(t, verify.Options{Scenario: "idle", Timeout: 2 * time.Second,
		ServerCmd: "sh -c 'echo hello, I never get ready; exec sleep 60' #"})
	if diff := cmp.Diff([]string{"hello, I never get ready"}, res.ServerOutput); diff != "" {
		t.Errorf("server output (-want +got):\n%s", diff)
	}
	if f := res.Verdict.Failure; f == nil || f.Check != assert.CheckDeadline {
		t.Errorf("failure %+v, want %s", f, assert.CheckDeadline)
	}
}

// An interrupt as the restart begins stops the old server at once and
// starts no new one (it waited out the stop's grace, then started a server
// only to stop it); the run ends interrupted while restarting.
func TestInterruptAtRestartStartsNoServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	started := 0
	res := runOnceCtx(t, ctx, verify.Options{Scenario: "idle", Hooks: &verify.Hooks{
		ServerStarted: func(int) {
			mu.Lock()
			started++
			mu.Unlock()
		},
		Phase: func(p replay.Phase) {
			if p == replay.PhaseRestarting {
				cancel()
			}
		},
	}})
	mu.Lock()
	defer mu.Unlock()
	if started != 1 {
		t.Errorf("%d servers started, want 1: none after the interrupt", started)
	}
	if f := res.Verdict.Failure; f == nil || f.Check != assert.CheckInterrupted {
		t.Errorf("failure %+v, want %s", f, assert.CheckInterrupted)
	}
}
