package record

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

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
