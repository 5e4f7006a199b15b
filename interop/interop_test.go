// Package interop proves, with a real Effect RPC client (effect 4.1.0, in
// interop/effect), that wireproof's fixture server speaks Effect RPC as the
// real orchestration server does, and that the recording proxy is transparent
// to that client and its recordings decode. It needs Node.js and the node
// dependencies (cd interop/effect && npm ci); without them every test skips.
// The product itself never needs Node.js.
package interop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/fixtures"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/t3"
	"github.com/wireproof/wireproof/verify"
)

// clientDir holds the Effect client and its pinned dependencies.
const clientDir = "effect"

// clientTimeout bounds one run of the client so that a stalled stream fails
// the test with the client's output instead of hanging until the test binary
// times out. It is a safety net, never what the test asserts.
const clientTimeout = 3 * time.Minute

// pollEvery is how often the gate controller reads the thread while it waits
// for the parent's first run to complete (no event tells it over HTTP).
const pollEvery = 20 * time.Millisecond

// requireNode returns the node binary, or skips the test when node or the
// client's node_modules is missing.
func requireNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testkit.Missing(t, testkit.EnvNodeRequired, "skipping the Effect interoperability test: node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(clientDir, "node_modules", "effect", "package.json")); err != nil {
		testkit.Missing(t, testkit.EnvNodeRequired, "skipping the Effect interoperability test: interop/effect/node_modules is missing (run: cd interop/effect && npm ci)")
	}
	return node
}

// startFixture starts an in-process fixture server on a fresh home and
// returns it with its bootstrap token.
func startFixture(t *testing.T, serialization string) (*fixtures.Server, string) {
	t.Helper()
	token := rand.Text()
	srv, err := fixtures.Start(t.Context(), &fixtures.ServerOptions{Serialization: serialization, Bootstrap: t3.Bootstrap{
		Mode: "desktop", NoBrowser: true, Host: "127.0.0.1", T3Home: t.TempDir(),
		DesktopBootstrapToken: token, TailscaleServePort: 443,
	}})
	if err != nil {
		t.Fatalf("starting the fixture server: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("closing the fixture server: %v", err)
		}
	})
	return srv, token
}

// scenario is one run of the idle scenario: the thread the client launches,
// the gate's path and the secret the gate answers with.
type scenario struct {
	threadID      string
	gatePath      string
	secret        string
	serialization string // the RPC serialization of server and client: json or ndjson
}

func newScenario() scenario {
	return scenario{threadID: t3.NewUUID(), gatePath: "/" + t3.NewUUID(), secret: "RESULT_" + t3.NewUUID()}
}

// parentFinishedPath, under the gate path, is where the client reports that
// its own subscription showed the parent's first run completed, as the live
// verifier releases its gate from what its subscription shows. Waiting for it
// makes sure the rest of the scenario streams to a subscribed client, so the
// Ack protocol is exercised however fast the fixture plays.
const parentFinishedPath = "/parent-finished"

// controlGate answers the child's gate request the way the live verifier
// does in idle: only once the parent's first run has completed, as the client
// reported and as the thread read from the fixture server directly (not
// through any proxy) confirms. It returns a wait function that reports what
// went wrong, if anything.
func controlGate(ctx context.Context, gate *record.Gate, server, bootstrapToken string, sc scenario) (wait func() error) {
	var (
		wg  sync.WaitGroup
		err error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		err = releaseAfterParent(ctx, gate, server, bootstrapToken, sc)
	}()
	return func() error { wg.Wait(); return err }
}

func releaseAfterParent(ctx context.Context, gate *record.Gate, server, bootstrapToken string, sc scenario) error {
	var child *record.HeldRequest
	reported := false
	for child == nil || !reported {
		select {
		case held := <-gate.Requests():
			switch held.Path {
			case sc.gatePath:
				child = held
			case sc.gatePath + parentFinishedPath:
				reported = true
				if err := held.Release(http.StatusNoContent, nil); err != nil {
					return fmt.Errorf("answering the client's report: %w", err)
				}
			default:
				_ = held.Release(http.StatusNotFound, nil)
				return fmt.Errorf("unexpected gate request for %q", held.Path)
			}
		case <-ctx.Done():
			return fmt.Errorf("gate: child request seen %v, client's report seen %v: %w", child != nil, reported, ctx.Err())
		}
	}
	c := t3.NewClient(server, nil)
	if _, err := c.ExchangeToken(ctx, bootstrapToken); err != nil {
		return fmt.Errorf("gate controller: %w", err)
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		read, _, err := c.ReadThread(ctx, sc.threadID)
		if err != nil {
			return fmt.Errorf("gate controller reading the thread: %w", err)
		}
		if runs := read.Projection.Runs; len(runs) > 0 && runs[0].Status == t3.RunCompleted {
			break
		}
		select {
		case <-tick.C:
		case <-child.Gone():
			return errors.New("the child's gate request went away before the parent's first run completed")
		case <-ctx.Done():
			return fmt.Errorf("the parent's first run never completed: %w", ctx.Err())
		}
	}
	if err := child.Release(http.StatusOK, []byte(sc.secret)); err != nil {
		return fmt.Errorf("releasing the gate: %w", err)
	}
	return nil
}

// clientResult is the one JSON line the client prints on success.
type clientResult struct {
	ThreadID string   `json:"threadId"`
	Runs     []string `json:"runs"`
	Ack      bool     `json:"ack"`
}

// runClient runs client.mjs against base and decodes its result line.
func runClient(ctx context.Context, t *testing.T, node, base, bootstrapToken, gateURL string, sc scenario) clientResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", base, bootstrapToken, gateURL, sc.secret, sc.threadID)
	cmd.Dir = clientDir
	cmd.Env = append(os.Environ(), "WIREPROOF_SERIALIZATION="+sc.serialization)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs against %s: %v\nstdout:\n%s\nstderr:\n%s", base, err, stdout.Bytes(), stderr.Bytes())
	}
	var last []byte
	sc2 := bufio.NewScanner(&stdout)
	for sc2.Scan() {
		if line := bytes.TrimSpace(sc2.Bytes()); len(line) > 0 {
			last = bytes.Clone(line)
		}
	}
	t.Logf("client result: %s", last)
	var res clientResult
	if err := json.Unmarshal(last, &res); err != nil {
		t.Fatalf("the client's result line %q: %v\nstderr:\n%s", last, err, stderr.Bytes())
	}
	return res
}

// checkResult checks the client's verdict: its thread, acknowledged, every
// run terminal and the first one completed (idle ends the parent's first turn
// and wakes it in a continuation run).
func checkResult(t *testing.T, sc scenario, res clientResult) {
	t.Helper()
	if res.ThreadID != sc.threadID {
		t.Errorf("client result thread = %q, want %q", res.ThreadID, sc.threadID)
	}
	if !res.Ack {
		t.Errorf("client result ack = false, want true")
	}
	if len(res.Runs) < 2 {
		t.Errorf("client result runs = %v, want the first run and a continuation", res.Runs)
	}
	for i, st := range res.Runs {
		if !t3.RunTerminal(st) {
			t.Errorf("run %d status %q is not terminal", i, st)
		}
	}
	if len(res.Runs) > 0 && res.Runs[0] != t3.RunCompleted {
		t.Errorf("first run status = %q, want %q", res.Runs[0], t3.RunCompleted)
	}
}

// TestEffectClientDirect drives the fixture server with the real Effect
// client, no proxy in between.
// TestEffectClientDirect runs the real client straight at the fixture server,
// with each serialization an Effect server can be configured with.
func TestEffectClientDirect(t *testing.T) {
	node := requireNode(t)
	for _, serialization := range fixtures.Serializations {
		t.Run(serialization, func(t *testing.T) {
			srv, token := startFixture(t, serialization)
			ctx := t.Context()
			rec := record.New(nil, nil)
			defer rec.Close()
			gate, err := record.StartGate(ctx, rec, nil)
			if err != nil {
				t.Fatalf("starting the gate: %v", err)
			}
			sc := newScenario()
			sc.serialization = serialization
			gctx, stopGate := context.WithCancel(ctx)
			wait := controlGate(gctx, gate, srv.URL(), token, sc)

			res := runClient(ctx, t, node, srv.URL(), token, gate.URL()+sc.gatePath, sc)

			stopGate()
			if err := wait(); err != nil {
				t.Errorf("gate: %v", err)
			}
			if err := gate.Close(); err != nil {
				t.Errorf("closing the gate: %v", err)
			}
			checkResult(t, sc, res)
		})
	}
}

// upstream parses the fixture server's URL for the proxy.
func upstream(t *testing.T, srv *fixtures.Server) *url.URL {
	t.Helper()
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatalf("fixture URL: %v", err)
	}
	return u
}

// TestEffectClientThroughProxy runs the same client through wireproof's
// recording proxy, then reads the bundle back: the proxy must be transparent
// to a real Effect client, and what it recorded must show Effect's wire
// behaviour and decode into calls that all ended.
func TestEffectClientThroughProxy(t *testing.T) {
	node := requireNode(t)
	srv, token := startFixture(t, "json")
	ctx := t.Context()

	path := filepath.Join(t.TempDir(), "interop.zst")
	w, err := bundle.Create(path, bundle.Header{
		Format: bundle.FormatVersion, Tool: "interop-test", Started: time.Now().UTC(),
		Manifest: bundle.Manifest{Scenario: "idle", Provider: "claudeAgent", Model: "claude-sonnet-4-6"},
	}, nil)
	if err != nil {
		t.Fatalf("creating the bundle: %v", err)
	}
	rec := record.New(w, &record.Options{Redact: []string{token}})
	proxy, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: upstream(t, srv)})
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	ps, err := record.Listen(ctx, "127.0.0.1:0", proxy)
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	gate, err := record.StartGate(ctx, rec, nil)
	if err != nil {
		t.Fatalf("starting the gate: %v", err)
	}
	sc := newScenario()
	gctx, stopGate := context.WithCancel(ctx)
	wait := controlGate(gctx, gate, srv.URL(), token, sc)

	res := runClient(ctx, t, node, ps.URL, token, gate.URL()+sc.gatePath, sc)

	stopGate()
	if err := wait(); err != nil {
		t.Errorf("gate: %v", err)
	}
	if err := gate.Close(); err != nil {
		t.Errorf("closing the gate: %v", err)
	}
	if err := ps.Close(context.WithoutCancel(ctx)); err != nil {
		t.Errorf("closing the proxy: %v", err)
	}
	if err := rec.Close(); err != nil {
		t.Fatalf("closing the recording: %v", err)
	}
	checkResult(t, sc, res)

	events := readBundle(t, path)
	checkPrompt(t, events, verify.Prompt("idle", "claudeAgent", "claude-sonnet-4-6", gate.URL()+sc.gatePath))
	checkWire(t, events)
	checkCalls(t, events, sc.threadID)
	if t.Failed() {
		for _, ev := range events {
			if ev.Kind == bundle.KindWSMessage || ev.Kind == bundle.KindWSClose || ev.Kind == bundle.KindGateRequest || ev.Kind == bundle.KindGateRelease {
				t.Logf("%d %s %s %s %d %s %.200s", ev.Seq, ev.Kind, ev.Conn, ev.Dir, ev.Code, ev.Err, ev.Body.Data)
			}
		}
	}
}
