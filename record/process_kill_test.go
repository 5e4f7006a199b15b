package record

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// printEmitter writes the supervised process's log lines to w, for the test
// that watches the supervisor from outside.
type printEmitter struct {
	mu sync.Mutex
	w  io.Writer
	n  uint64
}

func (e *printEmitter) Emit(ev *bundle.Event) (uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ev.Kind == bundle.KindProcLog {
		fmt.Fprintf(e.w, "%s\n", ev.Body.Data)
	}
	e.n++
	return e.n - 1, nil
}

// supervisor is the helper that supervises a server with a grandchild, as
// verify does, and waits to be killed.
func supervisor(out io.Writer) int {
	em := &printEmitter{w: out}
	p, err := StartProcess(context.Background(), em, &ProcessOptions{
		Argv:      testkit.HelperArgv(),
		Env:       testkit.HelperEnv("grandchild"),
		ReadyLine: "startup phase: complete",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := p.Ready(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	em.mu.Lock()
	fmt.Fprintf(out, "server %d\n", p.Pid())
	em.mu.Unlock()
	sleepForever()
	return 0
}

// TestProcessGroupDiesWithSupervisor kills the supervising process with
// SIGKILL, so Stop never runs: the server and what it started must die anyway.
func TestProcessGroupDiesWithSupervisor(t *testing.T) {
	cmd := testkit.HelperCommand("supervisor")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var server, grandchild int
	sc := bufio.NewScanner(stdout)
	for server == 0 && sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "grandchild" {
			grandchild, _ = strconv.Atoi(f[1])
		}
		if len(f) == 2 && f[0] == "server" {
			server, _ = strconv.Atoi(f[1])
		}
	}
	if server == 0 || grandchild == 0 {
		t.Fatalf("the supervisor reported server %d, grandchild %d", server, grandchild)
	}
	t.Cleanup(func() {
		syscall.Kill(server, syscall.SIGKILL)
		syscall.Kill(grandchild, syscall.SIGKILL)
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// They are not our children: there is no event for their death.
	waitFor(t, fmt.Sprintf("death of server %d after its supervisor's SIGKILL", server), func() bool { return !alive(server) })
	waitFor(t, fmt.Sprintf("death of grandchild %d in the server's process group", grandchild), func() bool { return !alive(grandchild) })
}
