package triage

import (
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
)

// A query value that is itself a percent-encoded URL holding a token is
// decoded for the HAR and then redacted: the HAR never shows in plain text
// what the bundle holds only encoded.
func TestHARQueryDecodedThenRedacted(t *testing.T) {
	path := writeBundle(t,
		&bundle.Event{Kind: bundle.KindHTTPRequest, Conn: "h1", Method: "GET", URL: "/login?next=https%3A%2F%2Fapp%2Fcb%3Ftoken%3Dtk-4455667788%26x%3D1&a=b%20c"},
		&bundle.Event{Kind: bundle.KindHTTPResponse, Conn: "h1", Status: 200},
		&bundle.Event{Kind: bundle.KindHTTPEnd, Conn: "h1"},
	)
	h := BuildHAR(load(t, path, nil), nil)
	q := h.Log.Entries[0].Request.QueryString
	if len(q) != 2 || q[0].Value != "https://app/cb?token=[REDACTED]&x=1" || q[1].Value != "b c" {
		t.Errorf("query %+v, want next decoded with its token redacted and a decoded", q)
	}
}

// The report's decode-error list does not join the pieces of a message split
// across frames: a secret split between them is not rebuilt.
func TestReportDecodeErrorsDoNotJoinFrames(t *testing.T) {
	path := writeBundle(t,
		&bundle.Event{Kind: bundle.KindWSOpen, Conn: "ws1", URL: "/ws"},
		&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText,
			Body: bundle.Text([]byte(`{"_tag":"Request","id":"1","tag":"ping","payload":{}}` + "\n" + `{"_tag":"Request","id":"2","tag":"x","payload":{"note":"piece-one-`))},
		&bundle.Event{Kind: bundle.KindWSMessage, Conn: "ws1", Dir: bundle.DirClientToServer, Type: bundle.TypeText,
			Body: bundle.Text([]byte(`piece-two`))},
		&bundle.Event{Kind: bundle.KindWSClose, Conn: "ws1", Dir: bundle.DirClientToServer, Code: 1000},
	)
	tl := load(t, path, nil)
	if tl.Replayed == nil || len(tl.Replayed.DecodeErrors) == 0 {
		t.Fatalf("no decode error to show: the bundle does not exercise the list")
	}
	html := report(t, tl)
	if strings.Contains(html, "piece-one-piece-two") {
		t.Errorf("the report joins two recorded frames into one string")
	}
}
