package triage

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
)

// TestHAROriginOfARecording: a `wireproof record` bundle names its upstream
// in the manifest; the HAR's URLs are that origin, without its userinfo.
func TestHAROriginOfARecording(t *testing.T) {
	for _, tc := range []struct{ upstream, http, ws string }{
		{"http://127.0.0.1:3773", "http://127.0.0.1:3773/api/x?a=1", "ws://127.0.0.1:3773/ws"},
		{"https://user:[REDACTED]@127.0.0.1:8443/base", "https://127.0.0.1:8443/api/x?a=1", "wss://127.0.0.1:8443/ws"},
	} {
		t.Run(tc.upstream, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rec.zst")
			w, err := bundle.Create(path, bundle.Header{Tool: "wireproof test", Manifest: bundle.Manifest{Options: map[string]string{"upstream": tc.upstream}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range []*bundle.Event{
				{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/api/x?a=1"},
				{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
				{Kind: bundle.KindHTTPEnd, Conn: "h1"},
				{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
			} {
				if _, err := w.Append(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			tl, err := Load(context.Background(), path, nil)
			if err != nil {
				t.Fatal(err)
			}
			h := BuildHAR(tl, nil)
			if len(h.Log.Entries) != 2 {
				t.Fatalf("%d entries, want 2", len(h.Log.Entries))
			}
			if got := h.Log.Entries[0].Request.URL; got != tc.http {
				t.Errorf("HTTP URL %q, want %q", got, tc.http)
			}
			if got := h.Log.Entries[1].Request.URL; got != tc.ws {
				t.Errorf("WebSocket URL %q, want %q", got, tc.ws)
			}
		})
	}
}

// TestHARContentLengthMatchesBodySize: redaction changes a body's length, so
// the Content-Length that crossed the wire no longer describes the recorded
// body; the HAR's header and bodySize must agree.
func TestHARContentLengthMatchesBodySize(t *testing.T) {
	h := BuildHAR(load(t, liveFailing, nil), nil)
	checked, rewritten := 0, 0
	for _, e := range h.Log.Entries {
		for _, side := range []struct {
			headers []HARNameValue
			size    int64
		}{{e.Request.Headers, e.Request.BodySize}, {e.Response.Headers, e.Response.BodySize}} {
			for _, hv := range side.headers {
				if !strings.EqualFold(hv.Name, "Content-Length") || side.size < 0 {
					continue
				}
				checked++
				if hv.Value != strconv.FormatInt(side.size, 10) {
					t.Errorf("%s %s: Content-Length %s, bodySize %d", e.Request.Method, e.Request.URL, hv.Value, side.size)
				}
			}
		}
		if strings.Contains(e.Comment, "redaction changed the body") {
			rewritten++
		}
	}
	if checked == 0 || rewritten == 0 {
		t.Fatalf("%d Content-Length headers checked, %d rewritten: the recording has no redacted body with one", checked, rewritten)
	}
}

// FuzzUpstreamOrigin: whatever the manifest holds, the origin has no
// userinfo and no path.
func FuzzUpstreamOrigin(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:1", "https://u:[REDACTED]@h:1/p?q#f", "ftp://x", "http://", "http://a@b@c/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scheme, host, ok := upstreamOrigin(s)
		if !ok {
			return
		}
		if scheme != "http" && scheme != "https" || host == "" || strings.ContainsAny(host, "@/?#") {
			t.Errorf("upstreamOrigin(%q) = %q, %q", s, scheme, host)
		}
	})
}
