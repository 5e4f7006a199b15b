package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
)

const (
	smallBundle = "testdata/inspect/small.zst" // a hand-built bundle of a short run
	cutBundle   = "testdata/inspect/cut.zst"   // small.zst cut short, as a killed recorder leaves it
)

// smallEvents is the content of small.zst; event i is at (i+1) ms.
func smallEvents() []bundle.Event {
	chunk := `{"_tag":"Chunk","requestId":"0","values":[{"type":"thread.message","threadId":"t1","text":"` +
		strings.Repeat("all work and no play ", 12) + `"}]}`
	return []bundle.Event{
		{Kind: bundle.KindProcStart, Conn: "server", Attrs: json.RawMessage(`{"argv":["t3","start","--bootstrap-fd","3"],"pid":4242}`)},
		{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStdout, Body: bundle.Text([]byte("listening on 127.0.0.1:3773\tok"))},
		{Kind: bundle.KindProcReady, Conn: "server", Body: bundle.Text([]byte("startup phase: complete"))},
		{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "POST", URL: "/api/auth/bootstrap", Header: http.Header{"Content-Type": {"application/json"}}},
		{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirClientToServer, Body: bundle.Text([]byte(`{"token":"[REDACTED]"}`))},
		{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
		{Kind: bundle.KindHTTPBody, Conn: "h1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"ok":true}`))},
		{Kind: bundle.KindHTTPEnd, Conn: "h1", Size: 11},
		{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws?ticket=[REDACTED]"},
		{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText,
			Body: bundle.Text([]byte(`{"_tag":"Request","id":0,"tag":"subscribeThread","payload":{"threadId":"t1"},"headers":[]}`))},
		{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeText, Body: bundle.Text([]byte(chunk))},
		{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText, Body: bundle.Text([]byte(`{"_tag":"Ack","requestId":0}`))},
		{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Type: bundle.TypeBinary, Body: bundle.Binary([]byte{0xde, 0xad, 0xbe, 0xef})},
		{Kind: bundle.KindGateRequest, Conn: "gate", Method: "GET", URL: "/gate"},
		{Kind: bundle.KindGateRelease, Conn: "gate", URL: "/gate", Status: 200, Body: bundle.Text([]byte("RESULT_0f0e"))},
		{Kind: bundle.KindMark, Name: "phase", Body: bundle.Text([]byte(`{"phase":"done"}`))},
		{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000, Reason: "done"},
		{Kind: bundle.KindProcSignal, Conn: "server", Name: "SIGTERM"},
		{Kind: bundle.KindProcExit, Conn: "server", Code: 0},
		{Kind: bundle.KindVerdict, Body: bundle.Text([]byte(`{"status":"passed"}`))},
	}
}

// writeSmallBundles writes small.zst and cut.zst (under -update).
func writeSmallBundles(t *testing.T) {
	t.Helper()
	var buf bytes.Buffer
	var now int64
	w, err := bundle.NewWriter(&buf, bundle.Header{
		Tool:    "wireproof test",
		Started: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Manifest: bundle.Manifest{Scenario: "idle", Provider: "fake", Model: "fake-1", Revision: "0123abcd", Dirty: true,
			Commands: [][]string{{"t3", "start", "--bootstrap-fd", "3"}}, Options: map[string]string{"timeout": "60", "repeat": "1"}},
	}, &bundle.WriterOptions{Clock: func() int64 { now += int64(time.Millisecond); return now }, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range smallEvents() {
		if _, err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	full := buf.Bytes()
	if err := os.MkdirAll(filepath.Dir(smallBundle), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(smallBundle, full, 0o644); err != nil {
		t.Fatal(err)
	}
	// Cut inside the last flushed block: the lifecycle flushes leave the
	// earlier events in complete blocks.
	if err := os.WriteFile(cutBundle, full[:len(full)-60], 0o644); err != nil {
		t.Fatal(err)
	}
}

// inspect runs the verb in-process and returns stdout, stderr and the error.
func inspect(t *testing.T, opts inspectOptions, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	opts.stdout, opts.stderr = &stdout, &stderr
	err := runInspect(context.Background(), opts, args)
	return stdout.String(), stderr.String(), err
}

func TestInspectGolden(t *testing.T) {
	if testkit.Update() {
		writeSmallBundles(t)
	}
	tests := []struct {
		name string
		opts inspectOptions
		file string
	}{
		{"summary", inspectOptions{}, smallBundle},
		{"full", inspectOptions{Full: true, Kinds: []string{"ws.message"}}, smallBundle},
		{"narrow", inspectOptions{width: 60, Conns: []string{"ws1", "server"}}, smallBundle},
		{"kind-ws-limit", inspectOptions{Kinds: []string{"ws"}, Limit: 3}, smallBundle},
		{"time-range", inspectOptions{From: 4 * time.Millisecond, To: 7 * time.Millisecond}, smallBundle},
		{"json-filtered", inspectOptions{JSON: true, Kinds: []string{"http.body", "mark"}}, smallBundle},
		{"cut", inspectOptions{}, cutBundle},
		{"cut-limit", inspectOptions{Limit: 2}, cutBundle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := inspect(t, tc.opts, tc.file)
			if err != nil {
				t.Fatalf("inspect: %v", err)
			}
			testkit.Golden(t, filepath.Join("testdata", "inspect", tc.name+".golden"), []byte(out))
		})
	}
}

// TestInspectJSONRoundTrip checks that --json without filters prints the
// decompressed bundle byte for byte, and that its lines decode to the events.
func TestInspectJSONRoundTrip(t *testing.T) {
	out, stderr, err := inspect(t, inspectOptions{JSON: true}, smallBundle)
	if err != nil || stderr != "" {
		t.Fatalf("inspect --json: %v, stderr %q", err, stderr)
	}
	plain := testkit.Decompress(t, smallBundle)
	if diff := cmp.Diff(string(plain), out); diff != "" {
		t.Errorf("inspect --json is not the decompressed bundle (-want +got):\n%s", diff)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := smallEvents()
	if len(lines) != len(want)+2 {
		t.Fatalf("got %d lines, want header, %d events and trailer", len(lines), len(want))
	}
	for i, line := range lines[1 : len(lines)-1] {
		var got bundle.Event
		if err := bundle.DecodeEvent([]byte(line), &got); err != nil {
			t.Fatalf("line %d: %v", i+2, err)
		}
		w := want[i]
		w.Seq, w.T = uint64(i+1), int64(i+1)*int64(time.Millisecond)
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("line %d (-want +got):\n%s", i+2, diff)
		}
	}
}

func TestInspectFilters(t *testing.T) {
	tests := []struct {
		name string
		opts inspectOptions
		want []uint64 // seqs of the events shown
	}{
		{"no filter", inspectOptions{}, seqRange(1, 20)},
		{"kind prefix", inspectOptions{Kinds: []string{"ws"}}, []uint64{9, 10, 11, 12, 13, 17}},
		{"exact kind and another", inspectOptions{Kinds: []string{"ws.close", "proc.exit"}}, []uint64{17, 19}},
		{"kind matching nothing", inspectOptions{Kinds: []string{"nope"}}, nil},
		{"conn", inspectOptions{Conns: []string{"gate"}}, []uint64{14, 15}},
		{"conns", inspectOptions{Conns: []string{"gate", "h1"}}, []uint64{4, 5, 6, 7, 8, 14, 15}},
		{"kind and conn", inspectOptions{Kinds: []string{"proc"}, Conns: []string{"server"}}, []uint64{1, 2, 3, 18, 19}},
		{"from", inspectOptions{From: 18 * time.Millisecond}, []uint64{18, 19, 20}},
		{"to", inspectOptions{To: 2 * time.Millisecond}, []uint64{1, 2}},
		{"from and to inclusive", inspectOptions{From: 5 * time.Millisecond, To: 7 * time.Millisecond}, []uint64{5, 6, 7}},
		{"to between events", inspectOptions{To: 2500 * time.Microsecond}, []uint64{1, 2}},
		{"limit", inspectOptions{Limit: 4}, []uint64{1, 2, 3, 4}},
		{"limit after filter", inspectOptions{Conns: []string{"ws1"}, Limit: 2}, []uint64{9, 10}},
		{"one seq", inspectOptions{Seq: "7"}, []uint64{7}},
		{"seq range", inspectOptions{Seq: "5-8"}, []uint64{5, 6, 7, 8}},
		{"around", inspectOptions{Around: 10}, seqRange(2, 18)},
		{"around near the start", inspectOptions{Around: 3}, seqRange(1, 11)},
		{"around with conn", inspectOptions{Around: 10, Conns: []string{"ws1"}}, []uint64{9, 10, 11, 12, 13, 17}},
		{"filter on the body", inspectOptions{Filter: "~b 'all work'"}, []uint64{11}},
		{"filter with kind", inspectOptions{Kinds: []string{"ws"}, Filter: "~dir c2s"}, []uint64{10, 12, 17}},
		{"filter on the exchange", inspectOptions{Filter: "~u bootstrap & ~c 200 & !~k http.end"}, []uint64{4, 5, 6, 7}},
		{"filter on the RPC call", inspectOptions{Filter: "~rpc subscribeThread & ~dir s2c"}, []uint64{11}},
		{"filter on a JSON path", inspectOptions{Filter: "~j values.0.threadId=t1"}, []uint64{11}},
		{"filter and seq", inspectOptions{Seq: "1-10", Filter: "~k proc | ~k gate"}, []uint64{1, 2, 3}},
		{"filter matching nothing", inspectOptions{Filter: "~c 5xx"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.JSON = true
			out, _, err := inspect(t, opts, smallBundle)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				var ev bundle.Event
				if err := bundle.DecodeEvent([]byte(line), &ev); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if i == 0 {
					if ev.Kind != bundle.KindHeader {
						t.Fatalf("first line is %s, want the header", ev.Kind)
					}
					continue
				}
				if ev.Kind != bundle.KindTrailer {
					got = append(got, ev.Seq)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events shown (-want +got):\n%s", diff)
			}
		})
	}
}

func seqRange(from, to uint64) []uint64 {
	var s []uint64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

func TestInspectTruncatedInProcess(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		out, stderr, err := inspect(t, inspectOptions{JSON: asJSON}, cutBundle)
		if err != nil {
			t.Fatalf("json=%v: inspect of a truncated bundle failed: %v", asJSON, err)
		}
		if !strings.Contains(stderr, cutBundle+" is truncated: after line ") {
			t.Errorf("json=%v: stderr %q does not say the bundle is truncated", asJSON, stderr)
		}
		if !strings.Contains(out, `"kind":"ws.open"`) && !strings.Contains(out, "ws.open") {
			t.Errorf("json=%v: output lost the events before the cut:\n%s", asJSON, out)
		}
	}
}

func TestInspectUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		opts inspectOptions
		args []string
		want string
	}{
		{"no bundle", inspectOptions{}, nil, "inspect takes one bundle, got 0 arguments"},
		{"negative limit", inspectOptions{Limit: -1}, []string{smallBundle}, "--limit must not be negative, got -1"},
		{"negative from", inspectOptions{From: -time.Second}, []string{smallBundle}, "--from must not be negative, got -1s"},
		{"to before from", inspectOptions{From: time.Second, To: time.Millisecond}, []string{smallBundle}, "--to 1ms is before --from 1s"},
		{"bad filter", inspectOptions{Filter: "~k ws & (~b x"}, []string{smallBundle}, `--filter: filter "~k ws & (~b x": column 14: expected a closing ), found the end of the expression`},
		{"filter with calls", inspectOptions{Filter: "~k ws", Calls: true}, []string{smallBundle}, "--filter selects timeline events; --calls lists calls: give one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := inspect(t, tc.opts, tc.args...)
			var usage usageError
			if !errors.As(err, &usage) || err.Error() != tc.want {
				t.Errorf("error = %v (%T), want usageError %q", err, err, tc.want)
			}
		})
	}
}

// TestInspectBinary runs the built program as a child process and checks its
// exit codes and streams.
func TestInspectBinary(t *testing.T) {
	dir := t.TempDir()
	notZstd := filepath.Join(dir, "notes.zst")
	if err := os.WriteFile(notZstd, []byte("{\"seq\":0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.zst")
	w, err := bundle.Create(newer, bundle.Header{Format: bundle.FormatVersion + 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.zst")
	gap := filepath.Join(dir, "gap.zst")
	writeGapBundle(t, gap)
	// A format 2 bundle cut before its seal: the trailer checks, but no
	// digest vouches for it.
	unsealed := filepath.Join(dir, "unsealed.zst")
	sealed, err := os.ReadFile(passingBundle(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unsealed, sealed[:len(sealed)-57], 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := bundle.Open(unsealed, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range r.All() {
		if err != nil {
			t.Fatal(err)
		}
	}
	unverified := r.Unverified()
	r.Close()
	if unverified == 0 {
		t.Fatalf("%s cut before its seal: no events unverified", unsealed)
	}
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // substring, "" for empty
		stderr     string // the whole of stderr, "" for empty
		stderrPart string // or a substring of it
	}{
		{"summary", []string{"inspect", smallBundle}, 0, "trailer     digest ok", "", ""},
		{"json", []string{"inspect", "--json", "--kind", "verdict", smallBundle}, 0, `"kind":"verdict"`, "", ""},
		{"truncated", []string{"inspect", cutBundle}, 0, "truncated: after line", "", cutBundle + " is truncated: after line"},
		{"unsealed", []string{"inspect", unsealed}, 0, fmt.Sprintf("\ntrailer     digest none: unsealed, %d events unverified\n", unverified), "", unsealed + " is truncated: the file ends after the trailer, before the seal"},
		{"missing", []string{"inspect", missing}, 3, "", "wireproof: stat " + missing + ": no such file or directory\n", ""},
		{"missing json", []string{"inspect", "--json", missing}, 3, "", "wireproof: stat " + missing + ": no such file or directory\n", ""},
		{"not zstd", []string{"inspect", notZstd}, 3, "", "wireproof: " + notZstd + " is not a wireproof bundle: not zstd data\n", ""},
		{"newer format", []string{"inspect", newer}, 3, "", "wireproof: " + newer + " is format 3; this wireproof reads format 2 or older: upgrade wireproof\n", ""},
		{"gap in seq", []string{"inspect", gap}, 3, "     1  +0.001000s  proc.start", "wireproof: " + gap + ": line 3: seq 3 where 2 was due: the sequence has a gap or repeat\n", ""},
		{"gap in seq json", []string{"inspect", "--json", gap}, 3, `"kind":"proc.start"`, "wireproof: " + gap + ": line 3: seq 3 where 2 was due: the sequence has a gap or repeat\n", ""},
		{"no bundle", []string{"inspect"}, 2, "", "", "accepts 1 arg(s), received 0"},
		{"bad limit", []string{"inspect", "--limit", "-2", smallBundle}, 2, "", "wireproof: --limit must not be negative, got -2\n", ""},
		{"bad duration", []string{"inspect", "--from", "soon", smallBundle}, 2, "", "", `invalid argument "soon" for "--from"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(wireproofBin, tc.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			code := exitStatus(t, cmd.Run())
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if tc.stdout == "" && stdout.Len() > 0 {
				t.Errorf("stdout is not empty:\n%s", stdout.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) {
				t.Errorf("stdout does not contain %q:\n%s", tc.stdout, stdout.String())
			}
			if tc.stderrPart != "" {
				if !strings.Contains(stderr.String(), tc.stderrPart) {
					t.Errorf("stderr does not contain %q:\n%s", tc.stderrPart, stderr.String())
				}
			} else if diff := cmp.Diff(tc.stderr, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInspectStopsOnInterrupt checks that a cancelled context ends the
// command with the interrupted status.
func TestInspectStopsOnInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := runInspect(ctx, inspectOptions{stdout: io.Discard, stderr: io.Discard}, []string{smallBundle})
	if code := exitCode(err, true); code != exitInterrupted {
		t.Errorf("exit code %d for %v, want %d", code, err, exitInterrupted)
	}
}

// writeGapBundle writes small.zst with its second event removed: corrupt, not
// truncated.
func writeGapBundle(t *testing.T, path string) {
	t.Helper()
	plain := testkit.Decompress(t, smallBundle)
	lines := strings.SplitAfter(string(plain), "\n")
	lines = append(lines[:2], lines[3:]...)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	if err := os.WriteFile(path, enc.EncodeAll([]byte(strings.Join(lines, "")), nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestInspectLongConnectionIDs: a connection id longer than the column
// (the scripted provider's "provider-1") widens it instead of running into
// its counts.
func TestInspectLongConnectionIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.zst")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	w, err := bundle.NewWriter(f, bundle.Header{Tool: "wireproof test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []bundle.Event{
		{Kind: bundle.KindProcStart, Conn: "server"},
		{Kind: bundle.KindProcStart, Conn: "provider-12"},
	} {
		if _, err := w.Append(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, err := inspect(t, inspectOptions{}, path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "payload bytes") {
			got = append(got, line)
		}
	}
	want := []string{
		"  server      proc.start 1; 0 payload bytes",
		"  provider-12 proc.start 1; 0 payload bytes",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("connection rows (-want +got):\n%s", diff)
	}
}

// TestInspectFilterFindsContent: on the failing run (idle, the server
// sending the completion notification twice), --kind ws.message --filter
// '~b notification' lists every message whose payload mentions a
// notification, the ones carrying the notification turn items among them,
// though no summary line names one.
func TestInspectFilterFindsContent(t *testing.T) {
	const failing = "../../fixtures/golden/live/idle-duplicate-notification.zst"
	r, err := bundle.Open(failing, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want, items []uint64
	for ev, err := range r.Events(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == bundle.KindWSMessage && bytes.Contains(bytes.ToLower(ev.Body.Data), []byte("notification")) {
			want = append(want, ev.Seq)
			if bytes.Contains(ev.Body.Data, []byte(`"type":"notification"`)) {
				items = append(items, ev.Seq)
			}
		}
	}
	r.Close()
	if len(items) < 2 {
		t.Fatalf("the failing run carries %d messages with notification items, want the duplicate's two or more", len(items))
	}
	out, _, err := inspect(t, inspectOptions{Quiet: true, Kinds: []string{"ws.message"}, Filter: "~b notification"}, failing)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var seq uint64
		if _, err := fmt.Sscan(line, &seq); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, seq)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages listed (-want +got):\n%s", diff)
	}
	// The JSON path picks the turn items' messages alone.
	out, _, err = inspect(t, inspectOptions{Quiet: true, JSON: true, Filter: "~k ws.message & ~b '\"type\":\"notification\"'"}, failing)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n") - 1; n != len(items) {
		t.Errorf("~b '\"type\":\"notification\"' listed %d messages, want %d:\n%s", n, len(items), out)
	}
}

// TestInspectFlags: --flags lists the failing run's flags (the deciding
// event's conformance flag) and its first bad state, before the deciding
// event, with the command that shows the stretch between them. The small
// bundle's binary frame is no Effect RPC, its subscription is never
// answered and its stream never proved delivery.
func TestInspectFlags(t *testing.T) {
	out, _, err := inspect(t, inspectOptions{Flags: true}, "../../fixtures/golden/live/idle-duplicate-notification.zst")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"1 flag(s)\n",
		"@138  +0.253327s  conformance",
		"single-notification: One completion produced multiple notifications\n",
		"first bad state: @96 (getThreadProjection), from where single-notification already saw the value it failed with at @138\n",
		"look: wireproof inspect ../../fixtures/golden/live/idle-duplicate-notification.zst --seq 96-138\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--flags output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = inspect(t, inspectOptions{Flags: true}, smallBundle)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		kinds = append(kinds, f[0]+" "+f[2])
	}
	if diff := cmp.Diff([]string{"@13 decode", "@16 unanswered", "@16 conformance"}, kinds); diff != "" {
		t.Errorf("--flags of the small bundle (-want +got):\n%s\n%s", diff, out)
	}
	_, _, err = inspect(t, inspectOptions{Flags: true, Calls: true}, smallBundle)
	var usage usageError
	if !errors.As(err, &usage) {
		t.Errorf("--flags --calls: %v, want a usage error", err)
	}
}
