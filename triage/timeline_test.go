package triage

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/bundle"
)

const (
	liveFailing = "../fixtures/golden/live/idle-duplicate-notification.zst"
	truncated   = "../fixtures/golden/idle-truncated.zst"
)

func load(t testing.TB, path string, opts *Options) *Timeline {
	t.Helper()
	tl, err := Load(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return tl
}

func TestLoadLiveBundle(t *testing.T) {
	tl := load(t, liveFailing, nil)
	type summary struct {
		HTTP, WS, Calls, Marks, Artifacts int
		Recorded, Reproduced              bool
		FailCheck                         string
		ParentThread                      string
		HaveParent                        bool
		Truncated                         bool
	}
	got := summary{
		HTTP: len(tl.HTTP), WS: len(tl.WS), Calls: len(tl.Calls), Marks: len(tl.Marks), Artifacts: len(tl.Artifacts),
		Recorded: tl.Recorded != nil, Reproduced: tl.Replayed.Reproduced, FailCheck: tl.Replayed.Verdict.Failure.Check,
		ParentThread: tl.ParentThread, HaveParent: tl.LastParent != nil, Truncated: tl.Truncated,
	}
	want := summary{
		// 15 Effect RPC calls on the socket, 8 stream-json calls of the two
		// provider processes (initialize, turns, tool_use → tool_result) and
		// 4 MCP JSON-RPC calls over HTTP.
		HTTP: 7, WS: 1, Calls: 27, Marks: got.Marks, Artifacts: 1,
		Recorded: true, Reproduced: true, FailCheck: "single-notification",
		ParentThread: "7755bcca-1abe-4043-ab9d-144e2b8d459b", HaveParent: true,
	}
	if got.Marks == 0 {
		t.Error("no marks decoded")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	if n := uint64(len(tl.Entries)); n != tl.Events { // the header has an entry, and is counted
		t.Errorf("%d entries for %d events, the header included", n, tl.Events)
	}
	for i, e := range tl.Entries {
		if e.Seq != uint64(i) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
	for _, c := range tl.Calls {
		if !c.Ended || c.Outcome == "" || c.Outcome == "open" {
			t.Errorf("call %s %s did not end: %+v", c.ID, c.Method, c)
		}
	}
}

func TestLoadCapsBodies(t *testing.T) {
	tl := load(t, liveFailing, &Options{MaxBody: 16})
	var capped int
	for _, x := range tl.HTTP {
		for _, b := range []Body{x.Request, x.Response} {
			if len(b.Data) > 16 {
				t.Errorf("%s kept %d bytes, cap 16", x.Conn, len(b.Data))
			}
			if b.Size > 16 {
				capped++
				if !b.Truncated {
					t.Errorf("%s: a %d-byte body is not marked truncated", x.Conn, b.Size)
				}
			}
		}
	}
	for _, c := range tl.WS {
		for _, m := range c.Messages {
			if len(m.Body.Data) > 16 || m.Body.Size > 16 && !m.Body.Truncated {
				t.Errorf("seq %d: kept %d of %d bytes, truncated %v", m.Seq, len(m.Body.Data), m.Body.Size, m.Body.Truncated)
			}
		}
	}
	if capped == 0 {
		t.Fatal("no body was over the cap: the test proves nothing")
	}
}

func TestLoadTruncated(t *testing.T) {
	tl := load(t, truncated, nil)
	if !tl.Truncated || tl.TruncatedReason == "" {
		t.Fatalf("Truncated %v (%q), want true with a reason", tl.Truncated, tl.TruncatedReason)
	}
	if len(tl.Entries) == 0 {
		t.Fatal("no events before the cut")
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	notBundle := filepath.Join(dir, "not.zst")
	if err := os.WriteFile(notBundle, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"missing", filepath.Join(dir, "missing.zst"), "no such file"},
		{"not zstd", notBundle, "not a wireproof bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(context.Background(), tc.path, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// writeBundle writes a small bundle of evs for tests that need a payload no
// recording has.
func writeBundle(t testing.TB, evs ...*bundle.Event) string {
	t.Helper()
	return writeBundleOptions(t, nil, evs...)
}

// writeBundleOptions is writeBundle with the manifest's options.
func writeBundleOptions(t testing.TB, opts map[string]string, evs ...*bundle.Event) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "b.zst")
	var now int64
	w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test", Manifest: bundle.Manifest{Scenario: "idle", Options: opts}},
		&bundle.WriterOptions{Clock: func() int64 { now += 1000; return now }})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if _, err := w.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// FuzzRead feeds arbitrary bytes to Read and the renderers: whatever Read
// accepts must render without panicking.
func FuzzRead(f *testing.F) {
	for _, p := range []string{liveFailing, truncated, "../fixtures/golden/idle-ndjson.zst"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := bundle.NewReader(bytes.NewReader(data), &bundle.ReaderOptions{MaxDecoderMemory: 8 << 20})
		if err != nil {
			return
		}
		defer r.Close()
		tl, err := Read(context.Background(), r, nil)
		if err != nil {
			return
		}
		if err := WriteHAR(&bytes.Buffer{}, tl, nil); err != nil {
			t.Fatal(err)
		}
		if err := WriteReport(&bytes.Buffer{}, tl, nil); err != nil {
			t.Fatal(err)
		}
	})
}

func cmpDiff(want, got any) string { return cmp.Diff(want, got) }

// TestBothSidesClose: a connection the client closes (1000) while the server
// still sends a message and then closes with its own code (4005) keeps both
// closes, each with its side, code and reason, and the HAR says both and
// ends at the last.
func TestBothSidesClose(t *testing.T) {
	path := writeBundle(t,
		&bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
		&bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000},
		&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirServerToClient, Body: bundle.Text([]byte(`{"late":true}`))},
		&bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirServerToClient, Code: 4005, Reason: "going"},
	)
	tl := load(t, path, nil)
	if len(tl.WS) != 1 {
		t.Fatalf("%d connections", len(tl.WS))
	}
	c := tl.WS[0]
	want := []WSClose{
		{Seq: 2, T: c.Closes[0].T, Dir: bundle.DirClientToServer, Code: 1000},
		{Seq: 4, T: c.Closes[1].T, Dir: bundle.DirServerToClient, Code: 4005, Reason: "going"},
	}
	if d := cmpDiff(want, c.Closes); d != "" {
		t.Errorf("closes (-want +got):\n%s", d)
	}
	if c.CloseSeq != 2 || c.CloseCode != 1000 {
		t.Errorf("first close: seq %d code %d, want 2 and 1000", c.CloseSeq, c.CloseCode)
	}
	var buf bytes.Buffer
	if err := WriteHAR(&buf, tl, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"comment": "closed by c2s 1000; by s2c 4005 going"`) {
		t.Errorf("HAR does not show both closes:\n%s", buf.String())
	}
}
