package cassette_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/cassette"
)

// rewrite copies the bundle at path with edit applied to each event (false
// drops it) and returns the copy's path.
func rewrite(t *testing.T, path string, edit func(*bundle.Event) bool) string {
	t.Helper()
	c, err := bundle.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "edited.zst")
	w, err := bundle.Create(out, bundle.Header{Format: bundle.FormatVersion, Tool: "cassette-test", Started: time.Now().UTC()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Events {
		if ev := &c.Events[i]; edit(ev) {
			if _, err := w.Append(ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// cutAt returns an edit that ends each model call's answer just before its
// first "event: <event>": the chunk holding it keeps what came before, and
// the chunks after it are dropped. The recorder writes one chunk per read
// from the wire, so a loaded machine may have read the whole answer at
// once; dropping that chunk would leave nothing of it.
func cutAt(event, endErr string) func(*bundle.Event) bool {
	marker := []byte("event: " + event)
	cut := map[string]bool{}
	return func(ev *bundle.Event) bool {
		if !strings.HasPrefix(ev.Conn, "model-") {
			return true
		}
		switch {
		case ev.Kind == bundle.KindHTTPBody && ev.Dir == bundle.DirServerToClient:
			if cut[ev.Conn] {
				return false
			}
			if i := bytes.Index(ev.Body.Data, marker); i >= 0 {
				cut[ev.Conn] = true
				ev.Body.Data = ev.Body.Data[:i]
				return i > 0
			}
		case ev.Kind == bundle.KindHTTPEnd:
			ev.Err = endErr
		}
		return true
	}
}

// TestRecordedHangUpIsNotACut: Codex closes its connection as soon as it
// has response.completed, so the recorder's read of the rest of the body
// often ends "context canceled". Played again, such a call streams the
// whole answer and ends cleanly; breaking it (as a cut is played) made
// Codex retry the call, played twice. A stream recorded cut before its
// terminal event is still played broken.
func TestRecordedHangUpIsNotACut(t *testing.T) {
	path, _ := recordCodex(t, codex1)
	hungUp := func(ev *bundle.Event) bool {
		if ev.Kind == bundle.KindHTTPEnd && strings.HasPrefix(ev.Conn, "model-") {
			ev.Err = "upstream body: context canceled"
		}
		return true
	}
	cut := cutAt("response.completed", "upstream body: unexpected EOF")
	for _, tc := range []struct {
		name   string
		edit   func(*bundle.Event) bool
		broken bool
	}{
		{"hung up after response.completed", hungUp, false},
		{"cut before response.completed", cut, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, _ := serve(t, &cassette.Options{Fast: true}, rewrite(t, path, tc.edit))
			for _, name := range childSession {
				req, _ := http.NewRequest(http.MethodPost, base+model.ResponsesPath, bytes.NewReader(codexBody(t, name, codex2)))
				req.Header.Set("Content-Type", "application/json")
				var body []byte
				resp, err := client.Do(req)
				if err == nil {
					// A cut before the recording's first byte breaks the
					// connection before the head: Do's error, not the read's.
					body, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if gotBroken := err != nil; gotBroken != tc.broken {
					t.Errorf("%s: error %v, want broken %v", name, err, tc.broken)
				}
				if got := bytes.Contains(body, []byte("event: response.completed")); got == tc.broken {
					t.Errorf("%s: response.completed played %v, want %v", name, got, !tc.broken)
				}
			}
		})
	}
}

// TestRecordedClientGoneIsHeld: a call the recorded client left mid-answer
// (an interrupted turn, a killed CLI) was never answered whole, and the
// break was the client's. Played again the stream is held open where the
// recorded client left, not cut: a client that leaves again leaves a
// stream the model had not ended, as recorded, instead of seeing the model
// break it. One that stays past the hold is cut.
func TestRecordedClientGoneIsHeld(t *testing.T) {
	path, _ := recordCodex(t, codex1)
	gone := rewrite(t, path, cutAt("response.completed", "client: gone before the body ended (context canceled)"))
	// call posts the request and reads its answer: to its end, or, when
	// quiet is set, until the answer has begun and then nothing came for
	// quiet (held), when it leaves. ended says whether the answer ended
	// (with err) before that.
	call := func(t *testing.T, base string, quiet time.Duration) (body []byte, ended bool, err error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+model.ResponsesPath, bytes.NewReader(codexBody(t, childSession[0], codex2)))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, true, err
		}
		defer resp.Body.Close()
		if quiet == 0 {
			body, err = io.ReadAll(resp.Body)
			return body, true, err
		}
		type read struct {
			b   []byte
			err error
		}
		reads := make(chan read)
		go func() {
			defer close(reads)
			buf := make([]byte, 4096)
			for {
				n, err := resp.Body.Read(buf)
				reads <- read{bytes.Clone(buf[:n]), err}
				if err != nil {
					return
				}
			}
		}()
		defer func() {
			cancel()
			for range reads {
			}
		}()
		for {
			var wait <-chan time.Time
			if len(body) > 0 {
				wait = time.After(quiet)
			}
			select {
			case r := <-reads:
				body = append(body, r.b...)
				if r.err != nil {
					return body, true, r.err
				}
			case <-wait:
				return body, false, nil
			}
		}
	}

	t.Run("the client leaves again", func(t *testing.T) {
		base, h := serve(t, &cassette.Options{Fast: true, HangUpHold: time.Hour}, gone)
		// Cut at once (as before), the read would end in an unexpected
		// EOF right after the recorded part; held, nothing more comes
		// until this client leaves.
		body, ended, err := call(t, base, time.Second)
		if ended {
			t.Errorf("the answer ended (%v) after %d bytes: the stream was not held", err, len(body))
		}
		if bytes.Contains(body, []byte("response.completed")) {
			t.Errorf("played response.completed, which was never recorded")
		}
		if !bytes.Contains(body, []byte("event: response.")) {
			t.Errorf("the recorded part of the answer was not played: %q", body)
		}
		waitReport(t, h, func(r cassette.Report) bool { return len(r.Held) == 1 && len(r.Cut) == 0 })
	})
	t.Run("the client stays past the hold", func(t *testing.T) {
		base, h := serve(t, &cassette.Options{Fast: true, HangUpHold: 50 * time.Millisecond}, gone)
		_, ended, err := call(t, base, 0)
		if !ended || err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("read ended with %v, want the stream cut after the hold", err)
		}
		rep := h.Report()
		if len(rep.Held) != 1 || len(rep.Cut) != 1 || !strings.Contains(rep.Summary(), "cut: "+rep.Cut[0]) {
			t.Errorf("report %+v, summary %q: want the call held and cut, and the summary to say so", rep, rep.Summary())
		}
	})
}

// waitReport waits until the handler's report satisfies ok: a handler
// notes a stream's end after its client has seen it.
func waitReport(t *testing.T, h *cassette.Handler, ok func(cassette.Report) bool) {
	t.Helper()
	for range 200 {
		if ok(h.Report()) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("report %+v", h.Report())
}
