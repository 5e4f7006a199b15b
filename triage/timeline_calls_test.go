package triage

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/replay/synth"
)

// wantCall is a call as the raw lines tell it.
type wantCall struct {
	Conn, ID, Method string
	Start, End       uint64
	Outcome          effectrpc.Outcome
}

// streamJSONCalls reads the control requests and tool calls of the provider
// channels straight from the bundle's stdio lines, with encoding/json: a
// control_request's request_id answered by the control_response in the
// other direction that names it; a tool_use block's id answered by the
// tool_result block that names it.
func streamJSONCalls(t *testing.T, path string) []wantCall {
	t.Helper()
	c, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []wantCall
	open := map[string]int{} // conn + id → index in out
	for _, ev := range c.Events {
		if ev.Kind != bundle.KindStdioLine || !strings.HasPrefix(ev.Conn, "provider-") {
			continue
		}
		var l struct {
			Type      string          `json:"type"`
			RequestID json.RawMessage `json:"request_id"`
			Request   struct {
				Subtype string `json:"subtype"`
			} `json:"request"`
			Response struct {
				Subtype   string          `json:"subtype"`
				RequestID json.RawMessage `json:"request_id"`
			} `json:"response"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(ev.Body.Data, &l) != nil {
			continue // a malformed line: a decode error, not a call
		}
		start := func(id json.RawMessage, method string) {
			open[ev.Conn+string(id)] = len(out)
			out = append(out, wantCall{Conn: ev.Conn, ID: string(id), Method: method, Start: ev.Seq, Outcome: effectrpc.OutcomeOpen})
		}
		end := func(id json.RawMessage, failed bool) {
			i, ok := open[ev.Conn+string(id)]
			if !ok {
				return
			}
			delete(open, ev.Conn+string(id))
			out[i].End, out[i].Outcome = ev.Seq, effectrpc.OutcomeSuccess
			if failed {
				out[i].Outcome = effectrpc.OutcomeFailure
			}
		}
		var blocks []struct {
			Type      string          `json:"type"`
			ID        json.RawMessage `json:"id"`
			Name      string          `json:"name"`
			ToolUseID json.RawMessage `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
		}
		_ = json.Unmarshal(l.Message.Content, &blocks)
		switch l.Type {
		case "control_request":
			start(l.RequestID, l.Request.Subtype)
		case "control_response":
			end(l.Response.RequestID, l.Response.Subtype != "success")
		case "assistant":
			for _, b := range blocks {
				if b.Type == "tool_use" {
					start(b.ID, "tool_use "+b.Name)
				}
			}
		case "user":
			for _, b := range blocks {
				if b.Type == "tool_result" {
					end(b.ToolUseID, b.IsError)
				}
			}
		}
	}
	return out
}

// TestStreamJSONCalls: the timeline (and so inspect --calls and the report)
// lists the calls of the provider processes a real `verify` run recorded —
// control requests with their responses, tool_use → tool_result by id —
// as the raw lines pair them, beside the Effect RPC calls, and the turns.
func TestStreamJSONCalls(t *testing.T) {
	for _, name := range []string{"idle.zst", "nested.zst", "idle-provider-malformed-line.zst", "idle-provider-tool-never-returns.zst"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("../fixtures/golden/live", name)
			want := streamJSONCalls(t, path)
			if len(want) == 0 {
				t.Fatal("the recording has no provider calls to compare with")
			}
			tl := load(t, path, nil)
			var got []wantCall
			turns := 0
			for _, c := range tl.Calls {
				if !strings.HasPrefix(c.Conn, "provider-") {
					continue
				}
				if c.Method == "turn" {
					turns++
					if c.Ended && c.EndSeq <= c.StartSeq {
						t.Errorf("turn %s %s ends at %d, before it starts at %d", c.Conn, c.ID, c.EndSeq, c.StartSeq)
					}
					continue
				}
				if c.Payload.Size == 0 || c.Ended && c.Outcome != effectrpc.OutcomeUnknown && c.Exit.Size == 0 {
					t.Errorf("call %s %s keeps no request or response line: %+v", c.Conn, c.ID, c)
				}
				w := wantCall{Conn: c.Conn, ID: c.ID, Method: c.Method, Start: c.StartSeq, Outcome: c.Outcome}
				if c.Ended && c.Outcome != effectrpc.OutcomeUnknown {
					w.End = c.EndSeq
				} else {
					w.Outcome = effectrpc.OutcomeOpen // cut off: the raw lines never answer it
				}
				got = append(got, w)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stream-json calls (-raw lines +timeline):\n%s", diff)
			}
			if turns == 0 {
				t.Error("no turn of a provider listed")
			}
		})
	}
}

// TestOnePassVerdict: the timeline's verdict comes from the same engine
// pass that decodes its calls to the end of the bundle, and it is exactly
// the verdict `wireproof replay` computes without that, for every golden
// bundle (decode errors included).
func TestOnePassVerdict(t *testing.T) {
	paths, _ := filepath.Glob("../fixtures/golden/*.zst")
	live, _ := filepath.Glob("../fixtures/golden/live/*.zst")
	paths = append(paths, live...)
	if len(paths) < 40 {
		t.Fatalf("only %d golden bundles found", len(paths))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tl := load(t, path, nil)
			want, err := replay.ReplayFile(context.Background(), path, delivery.Options(nil))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, tl.Replayed); diff != "" {
				t.Errorf("replay result (-replay +timeline's pass):\n%s", diff)
			}
		})
	}
}

// TestTapEndsCutOffCalls: a call the bundle cut off ends, on the timeline,
// at the bundle's last event, not at the last event that mattered to the
// checks (here the recording goes on with log lines no check reads, then
// is killed).
func TestTapEndsCutOffCalls(t *testing.T) {
	c, err := bundle.ReadFile(truncated, nil)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := json.Marshal(c.Header)
	if err != nil {
		t.Fatal(err)
	}
	evs := append([]bundle.Event{{Kind: bundle.KindHeader, Body: bundle.Text(hb)}}, c.Events...)
	last := c.Events[len(c.Events)-1]
	for i := range 3 {
		last = bundle.Event{Seq: last.Seq + 1, T: last.T + 1e6, Kind: bundle.KindProcLog, Conn: "server", Type: "stdout", Body: bundle.Text([]byte("still talking " + string(rune('a'+i))))}
		evs = append(evs, last)
	}
	path := filepath.Join(t.TempDir(), "cut.zst")
	if err := synth.WriteTruncated(path, evs); err != nil {
		t.Fatal(err)
	}
	tl := load(t, path, nil)
	if !tl.Truncated || tl.Events != last.Seq+1 {
		t.Fatalf("truncated %v after %d events, want true after %d (the header included)", tl.Truncated, tl.Events, last.Seq+1)
	}
	cut := 0
	for _, c := range tl.Calls {
		if c.Outcome != effectrpc.OutcomeUnknown || !strings.Contains(c.Reason, "the bundle ended") {
			continue
		}
		cut++
		if c.EndSeq != last.Seq || c.EndT != last.T {
			t.Errorf("call %s %s %s cut off by the end ends at seq %d t %d, want the last event's %d %d", c.Conn, c.ID, c.Method, c.EndSeq, c.EndT, last.Seq, last.T)
		}
	}
	if cut == 0 {
		t.Error("no call cut off by the end of the bundle")
	}
	// The checks still locate what they judge at the last event that
	// mattered to them, as replay does.
	want, err := replay.ReplayFile(context.Background(), path, delivery.Options(nil))
	if err != nil {
		t.Fatal(err)
	}
	want.Path = path
	if diff := cmp.Diff(want, tl.Replayed); diff != "" {
		t.Errorf("replay result (-replay +timeline's pass):\n%s", diff)
	}
}
