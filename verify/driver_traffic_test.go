package verify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/verify"
)

// rpcMessages splits a recorded WebSocket message into the RPC messages it
// carries: one object, an array of them (Effect v4), or ndjson lines.
func rpcMessages(data []byte) []map[string]json.RawMessage {
	var out []map[string]json.RawMessage
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var one map[string]json.RawMessage
		if json.Unmarshal(line, &one) == nil {
			out = append(out, one)
			continue
		}
		var many []map[string]json.RawMessage
		if json.Unmarshal(line, &many) == nil {
			out = append(out, many...)
		}
	}
	return out
}

// interruptsOfAnsweredRequests lists the driver's Interrupts sent for a
// request whose Exit the recorder had already passed to it: Effect's client
// never interrupts a request it has seen answered, and the recorder records an
// Exit before relaying it.
func interruptsOfAnsweredRequests(events []bundle.Event) []string {
	answered := map[string]uint64{} // conn + request id -> seq of its Exit
	var bad []string
	for _, ev := range events {
		if ev.Kind != bundle.KindWSMessage {
			continue
		}
		for _, m := range rpcMessages(ev.Body.Data) {
			var tag string
			json.Unmarshal(m["_tag"], &tag)
			key := ev.Conn + " " + string(bytes.Trim(m["requestId"], `"`))
			switch {
			case ev.Dir == bundle.DirServerToClient && tag == "Exit":
				answered[key] = ev.Seq
			case ev.Dir == bundle.DirClientToServer && tag == "Interrupt":
				if exit, ok := answered[key]; ok {
					bad = append(bad, fmt.Sprintf("Interrupt @%d for %s answered by the Exit @%d", ev.Seq, key, exit))
				}
			}
		}
	}
	return bad
}

// The check can fail: an Interrupt after its request's Exit is found, one
// before it, or for another connection's request, is not.
func TestInterruptCheckSeesAnsweredRequests(t *testing.T) {
	msg := func(seq uint64, conn string, dir bundle.Dir, body string) bundle.Event {
		return bundle.Event{Seq: seq, Kind: bundle.KindWSMessage, Conn: conn, Dir: dir, Body: bundle.Text([]byte(body))}
	}
	events := []bundle.Event{
		msg(1, "ws1", bundle.DirClientToServer, `{"_tag":"Request","id":5,"tag":"m","payload":{}}`),
		msg(2, "ws1", bundle.DirClientToServer, `{"_tag":"Request","id":6,"tag":"m","payload":{}}`),
		msg(3, "ws1", bundle.DirClientToServer, `{"_tag":"Interrupt","requestId":6}`), // before its Exit: fine
		msg(4, "ws1", bundle.DirServerToClient, `[{"_tag":"Exit","requestId":5,"exit":{"_tag":"Success","value":1}}]`),
		msg(5, "ws1", bundle.DirServerToClient, `{"_tag":"Exit","requestId":6,"exit":{"_tag":"Failure","cause":[]}}`+"\n"),
		msg(6, "ws2", bundle.DirClientToServer, `{"_tag":"Interrupt","requestId":5}`), // another connection
		msg(7, "ws1", bundle.DirClientToServer, `{"_tag":"Interrupt","requestId":5}`), // answered at 4
	}
	got := interruptsOfAnsweredRequests(events)
	want := []string{"Interrupt @7 for ws1 5 answered by the Exit @4"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("interrupts of answered requests (-want +got):\n%s", diff)
	}
}

// TestSerializationMismatchNamed: a server speaking json to a driver set to
// ndjson fails the run with a message that says so.
func TestSerializationMismatchNamed(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	res, err := verify.Run(context.Background(), verify.Options{
		Scenario: "idle", Serialization: "ndjson", Timeout: time.Minute, OutDir: t.TempDir(),
		// The fixture forced to json; "#" drops the start arguments verify appends.
		ServerCmd: wireproofBin + " fixture start --serialization json --bootstrap-fd 3 #",
	})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Verdict.Failure
	if f == nil || !strings.Contains(f.Seen, "serialization mismatch: the server speaks Effect RPC json, the client was set to ndjson") {
		t.Fatalf("failure %+v, want it to name the serialization mismatch", f)
	}
}
