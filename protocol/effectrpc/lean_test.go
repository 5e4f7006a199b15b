package effectrpc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

// sameAsEncodingJSON checks every lean decoder on input against
// encoding/json: when a lean decoder accepts it, encoding/json must accept it
// too and produce the same fields. It returns the names of the lean decoders
// that accepted it.
func sameAsEncodingJSON(t *testing.T, input []byte) map[string]bool {
	t.Helper()
	d := newLean(nil)
	accepted := map[string]bool{}
	compare := func(what string, leanOK bool, leanGot any, refErr error, refGot any) {
		t.Helper()
		testkit.LeanAgrees(t, accepted, input, what, leanOK, leanGot, refErr, refGot, cmpopts.IgnoreUnexported(wireMessage{}))
	}

	var lw, rw wireMessage
	leanOK := d.message(input, &lw)
	compare("message", leanOK, lw, json.Unmarshal(input, &rw), rw)

	lid, leanOK := d.threadID(input)
	var payload struct {
		ThreadID string `json:"threadId"`
	}
	compare("threadId", leanOK, lid, json.Unmarshal(input, &payload), payload.ThreadID)

	elems, leanOK := arrayElements(input)
	var relems []json.RawMessage
	compare("array frame", leanOK, elems, json.Unmarshal(input, &relems), relems)
	return accepted
}

// sampleValue stands for a projection in an Exit: a value the lean decoder
// validates and keeps raw.
const sampleValue = `{"thread":{"id":"t1","title":"x"},"runs":[{"id":"run-1","ordinal":1,"status":"completed"},null],"updatedAt":"2026-01-01T00:00:00.000Z"}`

// TestLeanDecoder: on each input, the lean decoder either gives up or agrees
// with encoding/json; the named decoder must accept (the fast path covers
// the shapes recordings have) or refuse (encoding/json would merge, fold or
// reject where the lean decoder cannot follow).
func TestLeanDecoder(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		decoder string // the lean decoder the case is about
		accept  bool   // whether it must accept (the fast path covers it) or refuse (leave it to encoding/json)
	}{
		{"getThreadProjection exit", `{"_tag":"Exit","requestId":"7","exit":{"_tag":"Success","value":` + sampleValue + `}}`, "message", true},
		{"request", `{"_tag":"Request","id":7,"tag":"orchestration.getThreadProjection","payload":{"threadId":"t1"},"headers":[]}`, "message", true},
		{"request with string id", `{"_tag":"Request","id":"7","tag":"x","payload":null,"traceId":"a"}`, "message", true},
		{"jsonrpc", `{"jsonrpc":"2.0","id":3,"result":{"a":1},"chunk":true}`, "message", true},
		{"jsonrpc null chunk and error", `{"jsonrpc":"2.0","id":null,"chunk":null,"error":null}`, "message", true},
		{"exit null", `{"_tag":"Exit","requestId":1,"exit":null}`, "message", true},
		{"array frame", `[{"_tag":"Ack","requestId":"1"}, {"_tag":"Ping"}]`, "array frame", true},
		{"payload threadId", `{"threadId":"t1","commandId":"c"}`, "threadId", true},
		{"case-folded tag", `{"_TAG":"Exit","requestId":1,"exit":{"_tag":"Success"}}`, "message", false},
		{"escaped keys inside a raw value", `{"_tag":"Exit","requestId":1,"exit":{"_tag":"Success","value":{"\u212aind":1}}}`, "message", true},
		{"Kelvin sign key", `{"_tag":"Exit","requestId":1,"\u212aind":"x"}`, "message", false},
		{"non-ASCII key", `{"_tag":"Exit","requestId":1,"Kind":"x"}`, "message", false},
		{"chunk not a bool", `{"jsonrpc":"2.0","id":1,"chunk":1}`, "message", false},
		{"exit not an object", `{"_tag":"Exit","exit":[]}`, "message", false},
		{"empty", ``, "message", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameAsEncodingJSON(t, []byte(tt.input))[tt.decoder]; got != tt.accept {
				t.Errorf("lean %s decoder accepted %q: %v, want %v", tt.decoder, tt.input, got, tt.accept)
			}
		})
	}
}

// TestKnownValue: an Exit's value the caller knows is taken as it is, and
// the message is the one decoded without it.
func TestKnownValue(t *testing.T) {
	frame := []byte(`{"_tag":"Exit","requestId":"7","exit":{"_tag":"Success","value":` + sampleValue + `}}`)
	calls := 0
	known := newLean(func(rest []byte) int {
		calls++
		if len(rest) >= len(sampleValue) && string(rest[:len(sampleValue)]) == sampleValue {
			return len(sampleValue)
		}
		return 0
	})
	var got, want wireMessage
	if !known.message(frame, &got) || !newLean(nil).message(frame, &want) {
		t.Fatal("lean decoder refused the frame")
	}
	if calls != 1 {
		t.Errorf("KnownValue called %d times, want 1", calls)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("with a known value (-without +with):\n%s", diff)
	}
}

// FuzzDecodeMessages feeds arbitrary frames to the decoder and the
// correlator: neither may panic, every decoded message has a known tag, and
// the lean decoder gives up or agrees with encoding/json.
func FuzzDecodeMessages(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/frames/*")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"_tag":"Exit","requestId":"7","exit":{"_tag":"Success","value":` + sampleValue + `}}`))
	known := map[string]bool{"Request": true, "Chunk": true, "Exit": true, "Ack": true, "Interrupt": true, "Ping": true, "Pong": true, "Eof": true, "Defect": true}
	f.Fuzz(func(t *testing.T, frame []byte) {
		sameAsEncodingJSON(t, frame)
		msgs, err := DecodeMessages(frame)
		if err == nil {
			for _, m := range msgs {
				if !known[m.Tag] {
					t.Fatalf("decoded message with unknown tag %q from %q", m.Tag, frame)
				}
			}
		}
		c := NewCorrelator(func(*Step) {}, &Options{Path: "/ws"})
		evs := []bundle.Event{
			{Seq: 1, Kind: bundle.KindWSOpen, Conn: "ws", URL: "/ws"},
			{Seq: 2, Kind: bundle.KindWSMessage, Conn: "ws", Dir: bundle.DirServerToClient, Body: bundle.Text(frame)},
			{Seq: 3, Kind: bundle.KindWSMessage, Conn: "ws", Dir: bundle.DirServerToClient, Body: bundle.Text(frame)},
		}
		for i := range evs {
			c.Feed(&evs[i])
		}
		c.End(&evs[2])
	})
}
