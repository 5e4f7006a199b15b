package interop

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
)

// buildWireproof builds the wireproof command for tests that run it as a
// user does.
func buildWireproof(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "wireproof")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/wireproof").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// wireproofServe runs `wireproof ARGS...` (record or playback), returns the
// URL it prints and a stop function that sends SIGINT and returns its exit
// status and stderr.
func wireproofServe(t *testing.T, bin string, args ...string) (string, func() (int, string)) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("wireproof %s: no URL: %v\n%s", args[0], err, stderr.String())
	}
	stopped := false
	stop := func() (int, string) {
		stopped = true
		cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), stderr.String()
		}
		if err != nil {
			t.Fatalf("wireproof %s: %v", args[0], err)
		}
		return 0, stderr.String()
	}
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return strings.TrimSpace(line), stop
}

// answerReports answers the client's parent-finished reports on a gate
// that has no child behind it: in playback no agent runs.
func answerReports(ctx context.Context, gate *record.Gate) {
	for {
		select {
		case held := <-gate.Requests():
			if strings.HasSuffix(held.Path, parentFinishedPath) {
				held.Release(http.StatusNoContent, nil)
			} else {
				held.Release(http.StatusNotFound, nil)
			}
		case <-ctx.Done():
			return
		}
	}
}

// TestEffectClientAgainstPlayback records the real Effect client through
// `wireproof record` against the fixture server, then runs it, with ids of
// its own, against `wireproof playback --strict` of that bundle alone: it
// reaches the same final state (runs, acknowledgement), nothing misses,
// every recorded request is played, and the playback bundle replays with
// the protocol-conformance suite passing and no decode error.
func TestEffectClientAgainstPlayback(t *testing.T) {
	node := requireNode(t)
	bin := buildWireproof(t)
	for _, serialization := range []string{"json", "ndjson"} {
		t.Run(serialization, func(t *testing.T) {
			ctx := t.Context()
			srv, token := startFixture(t, serialization)
			dir := t.TempDir()
			recorded := filepath.Join(dir, "recorded.zst")

			proxyURL, stopRecord := wireproofServe(t, bin, "record", "--upstream", srv.URL(), "--redact", token, "-o", recorded)
			rec := record.New(nil, nil)
			defer rec.Close()
			gate, err := record.StartGate(ctx, rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			sc := newScenario()
			sc.serialization = serialization
			gctx, stopGate := context.WithCancel(ctx)
			wait := controlGate(gctx, gate, srv.URL(), token, sc)
			want := runClient(ctx, t, node, proxyURL, token, gate.URL()+sc.gatePath, sc)
			stopGate()
			if err := wait(); err != nil {
				t.Errorf("gate: %v", err)
			}
			gate.Close()
			if code, stderr := stopRecord(); code != 0 {
				t.Fatalf("wireproof record exit %d:\n%s", code, stderr)
			}
			checkResult(t, sc, want)
			if err := srv.Close(); err != nil {
				t.Errorf("closing the fixture server: %v", err)
			}

			played := filepath.Join(dir, "played.zst")
			pbURL, stopPlayback := wireproofServe(t, bin, "playback", recorded, "--timing", "fast", "--strict", "-o", played)
			gate2, err := record.StartGate(ctx, rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			gctx2, stopGate2 := context.WithCancel(ctx)
			go answerReports(gctx2, gate2)
			sc2 := newScenario() // a thread, a gate path, and ids of its own
			sc2.secret, sc2.serialization = sc.secret, serialization
			got := runClient(ctx, t, node, pbURL, "another-bootstrap-token", gate2.URL()+sc2.gatePath, sc2)
			stopGate2()
			gate2.Close()
			code, stderr := stopPlayback()
			if code != 0 {
				t.Errorf("wireproof playback --strict exit %d, want 0:\n%s", code, stderr)
			}
			checkResult(t, sc2, got)
			if !slices.Equal(got.Runs, want.Runs) || got.Ack != want.Ack {
				t.Errorf("against playback: runs %v ack %v; recorded: runs %v ack %v", got.Runs, got.Ack, want.Runs, want.Ack)
			}
			res, err := replay.ReplayFile(ctx, played, delivery.Options(nil))
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict.Status != assert.StatusPassed || res.DecodeErrorCount != 0 {
				t.Errorf("replay of the playback bundle: %s (failure %+v), %d decode errors %v", res.Verdict.Status, res.Verdict.Failure, res.DecodeErrorCount, res.DecodeErrors)
			}
			if t.Failed() {
				t.Logf("wireproof playback stderr:\n%s", stderr)
				if b, err := os.ReadFile(recorded); err == nil {
					t.Logf("recorded bundle: %d bytes at %s", len(b), recorded)
				}
			}
		})
	}
}
