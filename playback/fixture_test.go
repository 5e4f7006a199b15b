package playback_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/fixtures"
	"github.com/wireproof/wireproof/playback"
	"github.com/wireproof/wireproof/protocol/effectrpc"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
	"github.com/wireproof/wireproof/verify"
)

// idleRun is what a client of the idle scenario ends with.
type idleRun struct {
	ThreadID string
	Runs     []string
	Ack      bool
}

// driveIdle runs the idle scenario as a client, with t3's own HTTP and
// Effect RPC client: token exchange, project, ticket, launch, then the
// subscription until the parent acknowledged the child's result (reading
// the projection for every item that is not a snapshot, as the Effect
// interop client does). Every id it makes is fresh.
func driveIdle(ctx context.Context, base, bootstrapToken, gateURL, secret, workspace, serialization, thread string) (idleRun, error) {
	c := t3.NewClient(base, nil)
	if _, err := c.ExchangeToken(ctx, bootstrapToken); err != nil {
		return idleRun{}, err
	}
	projectID := t3.NewUUID()
	if _, err := c.CreateProject(ctx, projectID, "Playback", workspace); err != nil {
		return idleRun{}, err
	}
	ticket, err := c.WebSocketTicket(ctx)
	if err != nil {
		return idleRun{}, err
	}
	rpc, err := c.DialRPC(ctx, ticket, &t3.RPCOptions{PingInterval: -1, Serialization: serialization})
	if err != nil {
		return idleRun{}, err
	}
	defer rpc.Close()
	launch := map[string]any{
		"commandId":         t3.NewUUID(),
		"threadId":          thread,
		"projectId":         projectID,
		"title":             "Playback: idle",
		"modelSelection":    map[string]string{"instanceId": "claudeAgent", "model": "claude-sonnet-4-6"},
		"runtimeMode":       "full-access",
		"interactionMode":   "default",
		"workspaceStrategy": map[string]string{"type": "root"},
		"initialMessage":    map[string]any{"text": verify.Prompt("idle", "claudeAgent", "claude-sonnet-4-6", gateURL), "attachments": []any{}},
	}
	var launched t3.LaunchResult
	if err := rpc.Call(ctx, t3.MethodLaunchThread, launch, &launched); err != nil {
		return idleRun{}, fmt.Errorf("launch: %w", err)
	}
	if launched.ThreadID != thread {
		return idleRun{}, fmt.Errorf("launch answered thread %s, want %s", launched.ThreadID, thread)
	}
	stream, err := rpc.Stream(ctx, t3.MethodSubscribe, map[string]string{"threadId": thread})
	if err != nil {
		return idleRun{}, err
	}
	defer stream.Close()
	for {
		v, err := stream.Next(ctx)
		if err != nil {
			return idleRun{}, fmt.Errorf("subscription: %w", err)
		}
		var item t3.StreamItem
		if err := json.Unmarshal(v, &item); err != nil {
			return idleRun{}, err
		}
		p := item.Projection
		if item.Kind != t3.ItemKindSnapshot || p == nil {
			p = &t3.Projection{}
			if err := rpc.Call(ctx, t3.MethodGetProjection, map[string]string{"threadId": thread}, p); err != nil {
				return idleRun{}, fmt.Errorf("getThreadProjection: %w", err)
			}
		}
		ack := slices.ContainsFunc(p.Messages, func(m t3.Message) bool { return m.Role == "assistant" && strings.Contains(m.Text, "ACK:"+secret) })
		terminal := len(p.Runs) > 0 && !slices.ContainsFunc(p.Runs, func(r t3.Run) bool { return !t3.RunTerminal(r.Status) })
		if ack && terminal {
			run := idleRun{ThreadID: thread, Ack: true}
			for _, r := range p.Runs {
				run.Runs = append(run.Runs, r.Status)
			}
			return run, nil
		}
	}
}

// releaseGate answers the child's gate request once the parent's first run
// completed (read from the server directly), with the secret.
func releaseGate(ctx context.Context, gate *record.Gate, server, bootstrapToken, thread, secret string) error {
	var held *record.HeldRequest
	select {
	case held = <-gate.Requests():
	case <-ctx.Done():
		return ctx.Err()
	}
	c := t3.NewClient(server, nil)
	if _, err := c.ExchangeToken(ctx, bootstrapToken); err != nil {
		return err
	}
	for {
		read, _, err := c.ReadThread(ctx, thread)
		if err == nil && len(read.Projection.Runs) > 0 && read.Projection.Runs[0].Status == t3.RunCompleted {
			return held.Release(http.StatusOK, []byte(secret))
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-held.Gone():
			return errors.New("the gate request went away")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TestIdleAgainstPlayback records the idle scenario driven by t3's Go client
// against the fixture server, then drives the same scenario, with ids of its
// own, against playback of that bundle alone: the client reaches the same
// final state, nothing misses, and the playback session's own recording
// decodes without errors.
func TestIdleAgainstPlayback(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the fixture server's idle scenario")
	}
	for _, serialization := range fixtures.Serializations {
		t.Run(serialization, func(t *testing.T) { testIdleAgainstPlayback(t, serialization) })
	}
}

func testIdleAgainstPlayback(t *testing.T, serialization string) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // a safety net, not what is asserted
	defer cancel()
	token := rand.Text()
	srv, err := fixtures.Start(ctx, &fixtures.ServerOptions{Serialization: serialization, Bootstrap: t3.Bootstrap{
		Mode: "desktop", NoBrowser: true, Host: "127.0.0.1", T3Home: t.TempDir(), DesktopBootstrapToken: token, TailscaleServePort: 443,
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	workspace := t.TempDir()
	secret := "RESULT_" + t3.NewUUID()

	// Record through wireproof's proxy.
	path := filepath.Join(t.TempDir(), "idle.zst")
	w, err := bundle.Create(path, bundle.Header{Tool: "playback-test", Started: time.Now()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := record.New(w, &record.Options{Redact: []string{token}})
	up, _ := url.Parse(srv.URL())
	proxy, _ := record.NewProxy(rec, &record.ProxyOptions{Upstream: up})
	ps, err := record.Listen(ctx, "", proxy)
	if err != nil {
		t.Fatal(err)
	}
	gate, err := record.StartGate(ctx, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	gatePath := "/" + t3.NewUUID()
	recThread := t3.NewUUID()
	gateErr := make(chan error, 1)
	go func() { gateErr <- releaseGate(ctx, gate, srv.URL(), token, recThread, secret) }()
	want, err := driveIdle(ctx, ps.URL, token, gate.URL()+gatePath, secret, workspace, serialization, recThread)
	if err != nil {
		t.Fatalf("recording run: %v", err)
	}
	if err := <-gateErr; err != nil {
		t.Fatalf("gate: %v", err)
	}
	gate.Close()
	ps.Close(context.Background())
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	srv.Close()

	// Play it back, the fixture server gone, recording the session.
	played := filepath.Join(t.TempDir(), "played.zst")
	pbRec, err := playback.Load(ctx, path)
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	pb, err := playback.Serve(ctx, pbRec, &playback.ServeOptions{Options: playback.Options{Timing: playback.Timing{Fast: true}}, Output: played})
	if err != nil {
		t.Fatalf("serving: %v", err)
	}
	defer pb.Close(context.Background())
	other := "http://127.0.0.1:1/" + t3.NewUUID() // another gate: its port and path are ids too
	got, err := driveIdle(ctx, pb.URL, "another-bootstrap-token", other, secret, workspace, serialization, t3.NewUUID())
	if err != nil {
		rep := pb.Player.Report()
		t.Fatalf("playback run: %v\n%s", err, rep.Summary())
	}
	if got.ThreadID == want.ThreadID {
		t.Errorf("the playback client used the recorded thread id %s", got.ThreadID)
	}
	if !slices.Equal(got.Runs, want.Runs) || got.Ack != want.Ack {
		t.Errorf("playback final state: runs %v ack %v; recorded runs %v ack %v", got.Runs, got.Ack, want.Runs, want.Ack)
	}
	if pb.Player.IDs()[want.ThreadID] != got.ThreadID {
		t.Errorf("the recorded thread %s was not mapped to the client's %s: %v", want.ThreadID, got.ThreadID, pb.Player.IDs())
	}
	rep, err := pb.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean() {
		t.Errorf("playback was not clean:\n%s", rep.Summary())
	}
	// The playback session's recording is evidence like any other: it
	// replays with the protocol-conformance suite passing and nothing
	// undecodable.
	res, err := replay.ReplayFile(ctx, played, delivery.Options(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict.Status != assert.StatusPassed || res.DecodeErrorCount != 0 {
		t.Errorf("replay of the playback bundle: %s (failure %+v), %d decode errors %v", res.Verdict.Status, res.Verdict.Failure, res.DecodeErrorCount, res.DecodeErrors)
	}
	// The playback session's recording decodes like the original: the same
	// calls, every one ended, no frame undecodable.
	if d := cmpCalls(t, path, played); d != "" {
		t.Errorf("calls of the playback recording differ from the recorded ones (-recorded +playback):\n%s", d)
	}
}

// cmpCalls decodes the RPC calls of two bundles with replay's Correlator and
// returns the diff of their method and outcome counts (calls the client
// interrupted counted as such); undecodable frames
// fail the test.
func cmpCalls(t *testing.T, a, b string) string {
	t.Helper()
	count := func(path string) map[string]int {
		r, err := bundle.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		n := map[string]int{}
		corr := effectrpc.NewCorrelator(func(ev *effectrpc.Step) {
			if ev.Err != nil {
				t.Errorf("%s: seq %d: %v", path, ev.Seq, ev.Err)
			}
			if ev.Ended && ev.Call != nil {
				outcome := string(ev.Call.Outcome)
				if ev.Call.Interrupted {
					// The client closes the socket right after its
					// Interrupt: whether the answer crossed the close
					// first is a race, in the recording as in playback.
					outcome = "interrupted by the client"
				}
				n[ev.Call.Method+" "+outcome]++
			}
		}, &effectrpc.Options{Path: t3.PathWebSocket})
		var ev bundle.Event
		for r.Next(&ev) == nil {
			switch ev.Kind {
			case bundle.KindWSOpen, bundle.KindWSMessage, bundle.KindWSClose:
				corr.Feed(&ev)
			}
		}
		corr.End(&ev)
		if len(n) == 0 {
			t.Errorf("%s: no RPC call decoded", path)
		}
		return n
	}
	return cmp.Diff(count(a), count(b))
}
