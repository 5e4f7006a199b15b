package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/t3"
)

// fixtureProc is a real `wireproof fixture start` child process.
type fixtureProc struct {
	cmd    *exec.Cmd
	url    string
	output *lockedBuffer
	done   chan error
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startFixtureProc starts the fixture with the bootstrap on fd 3, as the live
// driver does, and waits for the ready line.
func startFixtureProc(t *testing.T, b t3.Bootstrap, args ...string) *fixtureProc {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wireproofBin, append([]string{"fixture", "start", "--bootstrap-fd", "3"}, args...)...)
	cmd.ExtraFiles = []*os.File{r}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &lockedBuffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	raw, _ := json.Marshal(b)
	w.Write(raw)
	w.Close()
	p := &fixtureProc{cmd: cmd, output: out, done: make(chan error, 1)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	sc := bufio.NewScanner(stdout)
	ready := make(chan string, 1)
	go func() {
		sent := false
		for sc.Scan() {
			line := sc.Text()
			out.Write([]byte(line + "\n"))
			if !sent && strings.Contains(line, t3.ReadyLogLine) {
				sent = true
				ready <- line
			}
		}
		close(ready)
		p.done <- cmd.Wait()
	}()
	line, ok := <-ready
	if !ok {
		t.Fatalf("fixture exited before it was ready; output:\n%s", out.String())
	}
	_, addr, _ := strings.Cut(line, "listening on ")
	p.url = "http://" + strings.TrimSuffix(addr, ")")
	return p
}

func TestFixtureStartServesAndStopsOnSIGTERM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	home := t.TempDir()
	b := t3.Bootstrap{Mode: "desktop", NoBrowser: true, Host: "127.0.0.1", T3Home: home, DesktopBootstrapToken: "bootstrap-secret-token-1234"}
	p := startFixtureProc(t, b, "--log-level", "debug")
	c := t3.NewClient(p.url, nil)
	tok, err := c.ExchangeToken(ctx, b.DesktopBootstrapToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateProject(ctx, "p1", "project", home); err != nil {
		t.Fatal(err)
	}
	ticket, err := c.WebSocketTicket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rpc, err := c.DialRPC(ctx, ticket, nil)
	if err != nil {
		t.Fatal(err)
	}
	threadID := t3.NewUUID()
	var launched t3.LaunchResult
	if err := rpc.Call(ctx, t3.MethodLaunchThread, map[string]any{
		"commandId": "c1", "threadId": threadID, "projectId": "p1", "title": "t",
		"modelSelection": map[string]string{"instanceId": "claudeAgent", "model": "m"},
		"initialMessage": map[string]any{"text": "Say hello.", "attachments": []any{}},
	}, &launched); err != nil {
		t.Fatal(err)
	}
	// Wait on the stream for the run to finish (the agent finds no task).
	st, err := rpc.Stream(ctx, t3.MethodSubscribe, map[string]string{"threadId": threadID})
	if err != nil {
		t.Fatal(err)
	}
	for {
		raw, err := st.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var it t3.StreamItem
		json.Unmarshal(raw, &it)
		// The run may have completed before the subscription began.
		if it.Projection != nil && len(it.Projection.Runs) == 1 && it.Projection.Runs[0].Status == t3.RunCompleted {
			break
		}
		if it.Event != nil && it.Event.Type == "run.updated" && strings.Contains(string(it.Event.Payload), `"completed"`) {
			break
		}
	}
	rpc.Close()
	_, before, err := c.ReadThread(ctx, threadID)
	if err != nil {
		t.Fatal(err)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-p.done; err != nil {
		t.Fatalf("exit after SIGTERM: %v; output:\n%s", err, p.output.String())
	}
	p.done <- nil // for the cleanup
	logs := p.output.String()
	if !strings.Contains(logs, "request served") || !strings.Contains(logs, t3.PathProjectsMutate) {
		t.Errorf("debug log does not show the requests served:\n%s", logs)
	}
	for _, secret := range []string{b.DesktopBootstrapToken, tok, ticket} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains a credential %q", secret)
		}
	}

	// Same home, same port: the thread reads back exactly.
	b.Port = portFromURL(t, p.url)
	p2 := startFixtureProc(t, b)
	c.BaseURL = p2.url
	_, after, err := c.ReadThread(ctx, threadID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Errorf("thread changed across SIGTERM and restart (-want +got):\n%s", diff)
	}
}

func portFromURL(t *testing.T, u string) int {
	t.Helper()
	i := strings.LastIndexByte(u, ':')
	n := 0
	for _, ch := range u[i+1:] {
		n = n*10 + int(ch-'0')
	}
	return n
}

func TestFixtureUsageErrors(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		stdin   bool // give fd 3 a bootstrap
		boot    string
		code    int
		message string
	}{
		{"no fd", []string{"fixture", "start"}, false, "", exitUsage, "--bootstrap-fd is required"},
		{"bad level", []string{"fixture", "start", "--bootstrap-fd", "3", "--log-level", "loud"}, true, `{}`, exitUsage, `invalid --log-level "loud"`},
		{"bad fault", []string{"fixture", "start", "--bootstrap-fd", "3", "--fault", "nope"}, true, `{}`, exitUsage, `unknown fault "nope"`},
		{"bootstrap not json", []string{"fixture", "start", "--bootstrap-fd", "3"}, true, `nope`, exitUsage, "is not a JSON object"},
		{"bootstrap without home", []string{"fixture", "start", "--bootstrap-fd", "3"}, true, `{"desktopBootstrapToken":"x"}`, exitUsage, "needs t3Home and desktopBootstrapToken"},
		{"no subcommand", []string{"fixture"}, false, "", exitUsage, "start or faults"},
		{"bad serialization", []string{"fixture", "start", "--bootstrap-fd", "3", "--serialization", "xml"}, true, `{}`, exitUsage, `"xml"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(wireproofBin, c.args...)
			if c.stdin {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				cmd.ExtraFiles = []*os.File{r}
				w.WriteString(c.boot)
				w.Close()
				defer r.Close()
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			code := exitStatus(t, cmd.Run())
			if code != c.code || !strings.Contains(stderr.String(), c.message) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, stderr.String(), c.code, c.message)
			}
		})
	}
}

func TestFixtureFaultsGolden(t *testing.T) {
	out, err := exec.Command(wireproofBin, "fixture", "faults").Output()
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("testdata", "fixture", "faults.golden"), out)
}
