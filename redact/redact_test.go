package redact

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/t3"
)

// TestMain fails the tests if a goroutine or a process they started outlives
// them.
func TestMain(m *testing.M) { testkit.Main(m, nil) }

func TestRedactText(t *testing.T) {
	for _, c := range []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"no secret", []string{"s3cret-value"}, `{"a":"b"}`, `{"a":"b"}`},
		{"user secret anywhere", []string{"s3cret-value"}, "log: s3cret-value and s3cret-value", "log: [REDACTED] and [REDACTED]"},
		{"json field", nil, `{"access_token":"eyJhbGciOi.x.y","token_type":"Bearer"}`, `{"access_token":"[REDACTED]","token_type":"Bearer"}`},
		{"json field with space", nil, `{"ticket" : "tkt-123456", "expiresAt":"2026"}`, `{"ticket" : "[REDACTED]", "expiresAt":"2026"}`},
		{"json field non-string left", nil, `{"token":null,"n":1}`, `{"token":null,"n":1}`},
		{"query", nil, "/ws?orchestrationProtocol=2&wsTicket=abc123xyz", "/ws?orchestrationProtocol=2&wsTicket=[REDACTED]"},
		{"form", nil, "grant_type=x&subject_token=boot%2Fstrap123&subject_token_type=urn%3At3", "grant_type=x&subject_token=[REDACTED]&subject_token_type=urn%3At3"},
		{"token_type kept", nil, "requested_token_type=urn:ietf:params:oauth:token-type:access_token", "requested_token_type=urn:ietf:params:oauth:token-type:access_token"},
		{"escaped json in json", nil, `{"line":"{\"desktopBootstrapToken\":\"bt-999999\"}"}`, `{"line":"{\"desktopBootstrapToken\":\"[REDACTED]\"}"}`},
		{"log line", nil, "issued token: tk_0123456789 to client", "issued token: [REDACTED] to client"},
		{"learned value elsewhere", nil, `{"token":"learned-secret"} then learned-secret`, `{"token":"[REDACTED]"} then [REDACTED]`},
		{"json escaped secret", []string{`a/b"c`}, `{"x":"a/b\"c"}`, `{"x":"[REDACTED]"}`},
		{"url escaped secret", []string{"a+b/c=="}, "/x?k=a%2Bb%2Fc%3D%3D", "/x?k=[REDACTED]"},
		{"secret after escape", []string{"nabcdef"}, `{"x":"\nabcdef"}`, `{"x":"[REDACTED]"}`},
		{"already redacted", nil, `{"token":"[REDACTED]"} token=[REDACTED]`, `{"token":"[REDACTED]"} token=[REDACTED]`},
		{"upper case env", nil, "ACCESS_TOKEN=zzzzzzzz ok", "ACCESS_TOKEN=[REDACTED] ok"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Text(c.in, &Options{Secrets: c.secrets, TokenFields: t3.TokenFields})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Text(%q) (-want +got):\n%s", c.in, diff)
			}
			if json.Valid([]byte(c.in)) && !json.Valid([]byte(got)) {
				t.Errorf("redaction broke JSON: %s", got)
			}
		})
	}
}

func TestRedactEventHeaders(t *testing.T) {
	r := New(nil, nil)
	h := http.Header{
		"Authorization": {"Bearer access-123456"},
		"Cookie":        {"session=cookie-abcdef; theme=dark"},
		"Set-Cookie":    {"session=cookie-abcdef; Path=/; HttpOnly"},
		"X-Api-Key":     {"sk-ant-api-key-42"},
		"Accept":        {"application/json"},
	}
	orig := h.Clone()
	ev := &bundle.Event{Kind: bundle.KindHTTPRequest, Header: h, URL: "/x?token=query-tok-1", Body: bundle.Text([]byte("access-123456 dark sk-ant-api-key-42"))}
	r.Event(ev, r.Snapshot())
	want := http.Header{
		"Authorization": {"Bearer [REDACTED]"},
		"Cookie":        {"session=[REDACTED]; theme=[REDACTED]"},
		"Set-Cookie":    {"session=[REDACTED]; Path=/; HttpOnly"},
		"X-Api-Key":     {"[REDACTED]"},
		"Accept":        {"application/json"},
	}
	if diff := cmp.Diff(want, ev.Header); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(orig, h); diff != "" {
		t.Errorf("the caller's header map was modified (-want +got):\n%s", diff)
	}
	if got, want := string(ev.Body.Data), "[REDACTED] dark [REDACTED]"; got != want {
		t.Errorf("body = %q, want %q (the bearer credential and the API key are learned secrets; short cookie values are not)", got, want)
	}
	if got, want := ev.URL, "/x?token=[REDACTED]"; got != want {
		t.Errorf("url = %q, want %q", got, want)
	}
}

func TestRedactFastPathDoesNotCopy(t *testing.T) {
	r := New([]string{"s3cret-value"}, nil)
	in := []byte(`{"_tag":"Chunk","values":[{"type":"thread.message","text":"hello"}]}`)
	out := r.Bytes(in, r.Snapshot())
	if &out[0] != &in[0] {
		t.Error("text copied a payload that holds no secret")
	}
	if raceEnabled {
		return // the matcher's pooled scratch is dropped at random
	}
	if n := testing.AllocsPerRun(100, func() { r.Bytes(in, r.Snapshot()) }); n != 0 {
		t.Errorf("text allocates %v times per clean payload, want 0", n)
	}
}

// FuzzRedactText checks that a secret never survives redaction and that valid
// JSON stays valid. Seeds come from testdata/redact.
func FuzzRedactText(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.*")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), "s3cretTok")
	}
	f.Add(`{"token":"abcdefgh","x":"\u00abs3cretTok"}`, "s3cretTok")
	f.Fuzz(func(t *testing.T, in, secret string) {
		if len(secret) < 6 || strings.Contains(Redacted, secret) || !strings.ContainsFunc(secret, func(r rune) bool {
			return ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') && r != 'e' && r != 'E'
		}) || strings.ContainsFunc(secret, func(r rune) bool { return r > 127 || !isIdent(byte(r)) }) {
			return
		}
		got := Text(in, &Options{Secrets: []string{secret}})
		if strings.Contains(got, secret) {
			t.Errorf("secret %q survived: %q -> %q", secret, in, got)
		}
		if json.Valid([]byte(in)) && !json.Valid([]byte(got)) {
			t.Errorf("redaction broke JSON: %q -> %q", in, got)
		}
	})
}
