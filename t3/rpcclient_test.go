package t3_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/t3"
)

// scriptServer is a loopback WebSocket server whose behaviour is a function
// of the test: it sees every frame the client sends and answers as it likes.
// After the script it keeps reading, so the client's close handshake is
// answered. The returned channel is closed when the script has returned.
func scriptServer(t *testing.T, script func(ctx context.Context, c *websocket.Conn)) (*t3.Client, <-chan struct{}) {
	t.Helper()
	scripted := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		script(r.Context(), c)
		close(scripted)
		for {
			if _, _, err := c.Read(r.Context()); err != nil {
				return
			}
		}
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return t3.NewClient(srv.URL, nil), scripted
}

func readMsg(ctx context.Context, c *websocket.Conn) (effectrpc.Message, string, error) {
	_, b, err := c.Read(ctx)
	if err != nil {
		return effectrpc.Message{}, "", err
	}
	var m effectrpc.Message
	err = json.Unmarshal(b, &m)
	return m, string(b), err
}

func writeStr(ctx context.Context, c *websocket.Conn, s string) {
	_ = c.Write(ctx, websocket.MessageText, []byte(s))
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestStreamAcksEachChunkAndEndsWithEOF(t *testing.T) {
	ctx := testCtx(t)
	var frames []string
	c, scripted := scriptServer(t, func(ctx context.Context, conn *websocket.Conn) {
		req, raw, _ := readMsg(ctx, conn)
		frames = append(frames, raw)
		id := string(req.ID)
		writeStr(ctx, conn, `{"_tag":"Chunk","requestId":`+id+`,"values":[1,2]}`)
		_, raw, _ = readMsg(ctx, conn) // the Ack, after both values
		frames = append(frames, raw)
		writeStr(ctx, conn, `[{"_tag":"Chunk","requestId":`+id+`,"values":[3]},{"_tag":"Exit","requestId":`+id+`,"exit":{"_tag":"Success","value":null}}]`)
		_, raw, _ = readMsg(ctx, conn)
		frames = append(frames, raw)
	})
	rpc, err := c.DialRPC(ctx, "ticket", &t3.RPCOptions{PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	st, err := rpc.Stream(ctx, "s.method", map[string]int{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		v, err := st.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(v))
	}
	<-scripted // the server has seen every frame
	if diff := cmp.Diff([]string{"1", "2", "3"}, got); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	want := []string{
		`{"_tag":"Request","id":0,"tag":"s.method","payload":{"a":1},"headers":[]}`,
		`{"_tag":"Ack","requestId":0}`,
		`{"_tag":"Ack","requestId":0}`,
	}
	if diff := cmp.Diff(want, frames); diff != "" {
		t.Errorf("client frames (-want +got):\n%s", diff)
	}
}

func TestDefectFailsPendingCallsAndConnectionStaysOpen(t *testing.T) {
	ctx := testCtx(t)
	c, _ := scriptServer(t, func(ctx context.Context, conn *websocket.Conn) {
		readMsg(ctx, conn)
		writeStr(ctx, conn, `{"_tag":"Defect","defect":"boom"}`)
		req, _, _ := readMsg(ctx, conn)
		writeStr(ctx, conn, `{"_tag":"Exit","requestId":`+string(req.ID)+`,"exit":{"_tag":"Success","value":{"ok":true}}}`)
	})
	rpc, err := c.DialRPC(ctx, "ticket", &t3.RPCOptions{PingInterval: -1, StringIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	err = rpc.Call(ctx, "m", nil, nil)
	var re *t3.RPCError
	if !errors.As(err, &re) || string(re.Defect) != `"boom"` || !strings.Contains(re.Error(), "defect boom") {
		t.Fatalf("Call = %v, want an RPCError with defect boom", err)
	}
	var out struct{ OK bool }
	if err := rpc.Call(ctx, "m", nil, &out); err != nil || !out.OK {
		t.Errorf("second Call = %v %+v, want success", err, out)
	}
}

func TestFailureCausesAreDecoded(t *testing.T) {
	ctx := testCtx(t)
	c, _ := scriptServer(t, func(ctx context.Context, conn *websocket.Conn) {
		req, _, _ := readMsg(ctx, conn)
		writeStr(ctx, conn, `{"_tag":"Exit","requestId":`+string(req.ID)+`,"exit":{"_tag":"Failure","cause":[{"_tag":"Die","defect":{"name":"Error","message":"bad"}},{"_tag":"Interrupt","fiberId":27}]}}`)
	})
	rpc, err := c.DialRPC(ctx, "ticket", &t3.RPCOptions{PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	err = rpc.Call(ctx, "m", nil, nil)
	var re *t3.RPCError
	if !errors.As(err, &re) {
		t.Fatalf("Call = %v", err)
	}
	if got, want := re.Error(), "t3: m failed: Die Error: bad; Interrupt (fiber 27)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !re.Interrupted() {
		t.Error("Interrupted() = false")
	}
}

func TestPingsAndMissingPongsEndTheConnection(t *testing.T) {
	ctx := testCtx(t)
	pings := make(chan string, 8)
	c, _ := scriptServer(t, func(ctx context.Context, conn *websocket.Conn) {
		for {
			_, raw, err := readMsg(ctx, conn)
			if err != nil {
				return
			}
			pings <- raw // never answers Pong
		}
	})
	rpc, err := c.DialRPC(ctx, "ticket", &t3.RPCOptions{PingInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	if got := <-pings; got != `{"_tag":"Ping"}` {
		t.Errorf("first frame %s, want a Ping", got)
	}
	err = rpc.Call(ctx, "m", nil, nil) // fails when the pinger gives up
	var ce *t3.ConnectionError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "no Pong") {
		t.Errorf("Call = %v, want a ConnectionError about missing Pongs", err)
	}
}

func TestNDJSONSerialization(t *testing.T) {
	ctx := testCtx(t)
	c, _ := scriptServer(t, func(ctx context.Context, conn *websocket.Conn) {
		_, raw, _ := conn.Read(ctx)
		if !strings.HasSuffix(string(raw), "\n") {
			return
		}
		// Two messages split across three frames.
		writeStr(ctx, conn, `{"_tag":"Chunk","requestId":0,"values":["a"]}`+"\n"+`{"_tag":"Exit","req`)
		writeStr(ctx, conn, `uestId":0,"exit":{"_tag":"Succ`)
		writeStr(ctx, conn, `ess","value":null}}`+"\n")
		conn.Read(ctx) // the Ack
	})
	rpc, err := c.DialRPC(ctx, "ticket", &t3.RPCOptions{PingInterval: -1, Serialization: "ndjson"})
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	st, err := rpc.Stream(ctx, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := st.Next(ctx); err != nil || string(v) != `"a"` {
		t.Fatalf("Next = %s, %v", v, err)
	}
	if _, err := st.Next(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("Next at the end = %v, want io.EOF", err)
	}
}

func TestDialRPCRejectsUnknownSerialization(t *testing.T) {
	_, err := t3.NewClient("http://127.0.0.1:1", nil).DialRPC(context.Background(), "t", &t3.RPCOptions{Serialization: "msgpack"})
	if err == nil || !strings.Contains(err.Error(), `"msgpack"`) {
		t.Errorf("DialRPC = %v, want an error naming the serialization", err)
	}
}

// FuzzRPCFrames feeds arbitrary server frames to the client: it must never
// panic, and a call pending on the socket must end (with a value or an error)
// once the socket closes.
func FuzzRPCFrames(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "frames", "*.json"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, frame string) {
		ctx := testCtx(t)
		c, _ := scriptServer(t, func(ctx context.Context, conn *websocket.Conn) {
			readMsg(ctx, conn)
			writeStr(ctx, conn, frame)
			conn.Close(websocket.StatusNormalClosure, "")
		})
		rpc, err := c.DialRPC(ctx, "ticket", &t3.RPCOptions{PingInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer rpc.Close()
		_ = rpc.Call(ctx, "m", nil, new(json.RawMessage))
		if ctx.Err() != nil {
			t.Fatal("the call did not end")
		}
	})
}

// TestCloseLeavesNoGoroutines: Close stops the client's reader and pinger:
// no goroutine of the test outlives it.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	testkit.CheckLeaks(t)
	ctx := testCtx(t)
	c, _ := scriptServer(t, func(ctx context.Context, conn *websocket.Conn) {
		readMsg(ctx, conn)
		writeStr(ctx, conn, `{"_tag":"Chunk","requestId":0,"values":[]}`) // acked by a helper goroutine
	})
	rpc, err := c.DialRPC(ctx, "ticket", &t3.RPCOptions{PingInterval: time.Millisecond, CloseGrace: -1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rpc.Stream(ctx, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rpc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Next(ctx); !errors.Is(err, t3.ErrClientClosed) {
		t.Errorf("Next after Close = %v, want ErrClientClosed", err)
	}
}

// TestTeardownIsClean holds the client to Effect's way of ending: a caller
// whose context ended takes no value and writes nothing (coder/websocket
// would drop the socket under a write whose context ends), and Close
// interrupts the open stream, waits for the Exit answering it and closes
// the socket with 1000.
func TestTeardownIsClean(t *testing.T) {
	ctx := testCtx(t)
	type seen struct {
		frames []string
		code   websocket.StatusCode
	}
	got := make(chan seen, 1)
	c, _ := scriptServer(t, func(ctx context.Context, conn *websocket.Conn) {
		var s seen
		defer func() { got <- s }()
		req, raw, _ := readMsg(ctx, conn)
		s.frames = append(s.frames, raw)
		id := string(req.ID)
		writeStr(ctx, conn, `{"_tag":"Chunk","requestId":`+id+`,"values":["a"]}`)
		for {
			m, raw, err := readMsg(ctx, conn)
			if err != nil {
				s.code = websocket.CloseStatus(err)
				return
			}
			s.frames = append(s.frames, raw)
			if m.Tag == effectrpc.TagInterrupt {
				writeStr(ctx, conn, `{"_tag":"Exit","requestId":`+id+`,"exit":{"_tag":"Failure","cause":[{"_tag":"Interrupt","fiberId":7}]}}`)
			}
		}
	})
	rpc, err := c.DialRPC(ctx, "ticket", &t3.RPCOptions{PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rpc.Stream(ctx, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.Next(gone); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := rpc.Stream(gone, "t", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream with a cancelled context = %v, want context.Canceled", err)
	}
	if err := rpc.Err(); err != nil {
		t.Fatalf("the connection ended under a cancelled context: %v", err)
	}
	v, err := st.Next(ctx)
	if err != nil || string(v) != `"a"` {
		t.Fatalf("Next = %s, %v", v, err)
	}
	if err := rpc.Close(); err != nil {
		t.Fatal(err)
	}
	var s seen
	select {
	case s = <-got:
	case <-ctx.Done():
		t.Fatal("the server never saw the connection end")
	}
	want := []string{`{"_tag":"Request","id":0,"tag":"s","payload":null,"headers":[]}`, `{"_tag":"Ack","requestId":0}`, `{"_tag":"Interrupt","requestId":0}`}
	if len(s.frames) != len(want) || s.frames[1] != want[1] || s.frames[2] != want[2] || !strings.Contains(s.frames[0], `"tag":"s"`) {
		t.Errorf("frames the server read:\n%s\nwant:\n%s", strings.Join(s.frames, "\n"), strings.Join(want, "\n"))
	}
	if s.code != websocket.StatusNormalClosure {
		t.Errorf("the socket ended with %d, want 1000", s.code)
	}
}
