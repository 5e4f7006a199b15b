package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
	"github.com/wireproof/wireproof/verify"
)

// teardownProblems lists what a bundle shows of an unclean end of the
// driver's RPC sockets: a socket not closed by the driver with 1000 (or
// closed abnormally, 1006), a request or an Interrupt the server never
// answered with an Exit before the close, or a projection read sent after
// the engine decided the run (passed, failed or the restart asked for).
func teardownProblems(events []bundle.Event) []string {
	var bad []string
	e := replay.NewEngine(delivery.EngineOptions(nil))
	decided := uint64(0)
	type conn struct {
		open   map[string]uint64 // request id -> seq of the Request (or Interrupt) awaiting an Exit
		closed bool
	}
	conns := map[string]*conn{}
	for i := range events {
		ev := &events[i]
		if err := e.Feed(ev); err != nil {
			return append(bad, fmt.Sprintf("the engine broke at @%d: %v", ev.Seq, err))
		}
		if decided == 0 {
			switch e.Status().Phase {
			case replay.PhasePassed, replay.PhaseFailed, delivery.PhaseRestart:
				decided = ev.Seq
			}
		}
		switch ev.Kind {
		case bundle.KindWSOpen:
			conns[ev.Conn] = &conn{open: map[string]uint64{}}
		case bundle.KindWSMessage:
			c := conns[ev.Conn]
			if c == nil {
				continue
			}
			for _, m := range rpcMessages(ev.Body.Data) {
				var tag, method string
				json.Unmarshal(m["_tag"], &tag)
				json.Unmarshal(m["tag"], &method)
				switch {
				case ev.Dir == bundle.DirClientToServer && tag == effectrpc.TagRequest:
					c.open[string(bytes.Trim(m["id"], `"`))] = ev.Seq
					if decided != 0 && method == t3.MethodGetProjection {
						bad = append(bad, fmt.Sprintf("%s: a projection read @%d after the engine decided @%d", ev.Conn, ev.Seq, decided))
					}
				case ev.Dir == bundle.DirClientToServer && tag == effectrpc.TagInterrupt:
					c.open[string(bytes.Trim(m["requestId"], `"`))] = ev.Seq
				case ev.Dir == bundle.DirServerToClient && tag == effectrpc.TagExit:
					delete(c.open, string(bytes.Trim(m["requestId"], `"`)))
				}
			}
		case bundle.KindWSClose:
			c := conns[ev.Conn]
			if c == nil || c.closed {
				continue // the close answering the first one
			}
			c.closed = true
			if ev.Dir != bundle.DirClientToServer || ev.Code != 1000 || ev.Err != "" {
				bad = append(bad, fmt.Sprintf("%s: closed @%d by %s with %d %q, want the driver's 1000", ev.Conn, ev.Seq, ev.Dir, ev.Code, ev.Err))
			}
			for id, seq := range c.open {
				bad = append(bad, fmt.Sprintf("%s: id %s @%d unanswered at the close @%d", ev.Conn, id, seq, ev.Seq))
			}
		}
	}
	for name, c := range conns {
		if !c.closed {
			bad = append(bad, name+": never closed")
		}
	}
	return bad
}

// The check can fail: an abnormal close, an unanswered request and a poll
// after the decision are each found.
func TestTeardownProblemsFound(t *testing.T) {
	at := func(seq uint64, ev bundle.Event) bundle.Event { ev.Seq = seq; return ev }
	msg := func(seq uint64, dir bundle.Dir, body string) bundle.Event {
		return at(seq, bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: dir, Body: bundle.Text([]byte(body))})
	}
	events := []bundle.Event{
		at(1, bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1"}),
		msg(2, bundle.DirClientToServer, `{"_tag":"Request","id":0,"tag":"orchestration.subscribeThread","payload":{}}`),
		msg(3, bundle.DirClientToServer, `{"_tag":"Request","id":1,"tag":"orchestration.getThreadProjection","payload":{}}`),
		msg(4, bundle.DirServerToClient, `{"_tag":"Exit","requestId":1,"exit":{"_tag":"Success","value":{}}}`),
		at(5, bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 1006, Err: "EOF"}),
	}
	got := teardownProblems(events)
	want := []string{`ws1: closed @5 by s2c with 1006 "EOF", want the driver's 1000`, "ws1: id 0 @2 unanswered at the close @5"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("problems\n%q\nwant\n%q", got, want)
	}
}

// TestTeardownCleanInFiftyRuns runs the idle scenario 50 times in a row
// against the fixture server (real processes and sockets) and requires
// every bundle to end cleanly: the driver's socket closed by it with 1000,
// every request and Interrupt answered, no projection read after the
// engine decided. -short runs 5.
func TestTeardownCleanInFiftyRuns(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	n := 50
	if testing.Short() {
		n = 5
	}
	out := t.TempDir()
	if d := os.Getenv("WIREPROOF_TEARDOWN_OUT"); d != "" {
		out = d // kept after the test, to look at
	}
	clean := 0
	for i := 1; i <= n; i++ {
		res, err := verify.Run(context.Background(), verify.Options{
			Scenario: assert.ScenarioIdle, Iteration: i, OutDir: out, RepoDir: t.TempDir(),
			Timeout: 2 * time.Minute, Executable: wireproofBin,
		})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if res.Verdict.Status != assert.StatusPassed {
			t.Errorf("run %d: %s, failure %+v", i, res.Verdict.Status, res.Verdict.Failure)
		}
		_, events := readBundle(t, res.Bundle)
		if bad := teardownProblems(events); len(bad) > 0 {
			t.Errorf("run %d (%s) did not end cleanly:\n  %s", i, res.Bundle, bytes.Join(func() [][]byte {
				var b [][]byte
				for _, s := range bad {
					b = append(b, []byte(s))
				}
				return b
			}(), []byte("\n  ")))
		} else {
			clean++
		}
		// Only the failing runs' bundles are kept for a look.
		if !t.Failed() {
			os.Remove(res.Bundle)
			os.Remove(res.VerdictFile)
		}
	}
	if clean != n {
		t.Errorf("%d of %d runs ended cleanly (bundles left in %s)", clean, n, filepath.Clean(out))
	}
}
