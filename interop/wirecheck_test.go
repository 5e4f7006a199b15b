package interop

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
)

// TestWireProblems shows that the checks run on the real client's recording
// can fail: each case breaks one rule of Effect 4.1.0's wire behaviour. It
// needs no node.
func TestWireProblems(t *testing.T) {
	const (
		req     = `{"_tag":"Request","id":4,"tag":"orchestration.subscribeThread","payload":{"threadId":"t"},"traceId":"a","spanId":"b","sampled":true,"headers":[]}`
		chunk   = `{"_tag":"Chunk","requestId":4,"values":[{"kind":"event"}]}`
		ack     = `{"_tag":"Ack","requestId":4}`
		intr    = `{"_tag":"Interrupt","requestId":4}`
		intExit = `{"_tag":"Exit","requestId":4,"exit":{"_tag":"Failure","cause":[{"_tag":"Interrupt","fiberId":1}]}}`
	)
	type frame struct {
		dir  bundle.Dir
		body string
	}
	c2s := func(b string) frame { return frame{bundle.DirClientToServer, b} }
	s2c := func(b string) frame { return frame{bundle.DirServerToClient, b} }
	tests := []struct {
		name   string
		frames []frame
		want   []string
	}{
		{"clean", []frame{c2s(req), s2c(chunk), c2s(ack), s2c(chunk), c2s(ack), c2s(intr), s2c(intExit)}, nil},
		{"array frame", []frame{c2s("[" + req + "]"), s2c(chunk), c2s("[" + ack + "]"), s2c(chunk)}, nil},
		{"string id", []frame{c2s(`{"_tag":"Request","id":"0","tag":"m","payload":{},"headers":[]}`)},
			[]string{`seq 2: Request id "0" is not a JSON number (Effect 4.1.0 sends numbers)`}},
		{"no headers", []frame{c2s(`{"_tag":"Request","id":0,"tag":"m","payload":{}}`)},
			[]string{"seq 2: Request headers = , want []", "seq 2: Request keys (tracing keys left out) = [_tag id tag payload], want [_tag id tag payload headers]"}},
		{"headers first", []frame{c2s(`{"_tag":"Request","headers":[],"id":0,"tag":"m","payload":{}}`)},
			[]string{"seq 2: Request keys (tracing keys left out) = [_tag headers id tag payload], want [_tag id tag payload headers]"}},
		{"chunk before ack", []frame{c2s(req), s2c(chunk), s2c(chunk)},
			[]string{"seq 4: Chunk for request ws1/4 before the client acked the previous one"}},
		{"two values", []frame{c2s(req), s2c(`{"_tag":"Chunk","requestId":4,"values":[1,2]}`)},
			[]string{"seq 3: Chunk values [1,2]: want one value (err <nil>)"}},
		{"interrupt answered with success", []frame{c2s(req), c2s(intr), s2c(`{"_tag":"Exit","requestId":4,"exit":{"_tag":"Success","value":null}}`)},
			[]string{`seq 4: Exit of an interrupted call = {"_tag":"Success","value":null}, want a Failure of Interrupts with numeric fiberIds`}},
		{"string fiber id", []frame{c2s(req), c2s(intr), s2c(`{"_tag":"Exit","requestId":4,"exit":{"_tag":"Failure","cause":[{"_tag":"Interrupt","fiberId":"#1"}]}}`)},
			[]string{`seq 4: Exit of an interrupted call = {"_tag":"Failure","cause":[{"_tag":"Interrupt","fiberId":"#1"}]}, want a Failure of Interrupts with numeric fiberIds`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events := []bundle.Event{{Seq: 1, Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws?orchestrationProtocol=2&wsTicket=x"}}
			for i, f := range tc.frames {
				events = append(events, bundle.Event{Seq: uint64(i + 2), Kind: bundle.KindWSMessage, Conn: "ws1", Dir: f.dir,
					Type: bundle.TypeText, Body: bundle.Payload{Data: []byte(f.body)}})
			}
			msgs, err := rpcMessages(events)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := wireProblems(msgs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("wireProblems (-want +got):\n%s", diff)
			}
		})
	}
}
