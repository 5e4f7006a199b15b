package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/t3"
)

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
			got := RedactTextWith(c.in, &Options{Redact: c.secrets, TokenFields: t3.TokenFields})
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("RedactText(%q) (-want +got):\n%s", c.in, diff)
			}
			if json.Valid([]byte(c.in)) && !json.Valid([]byte(got)) {
				t.Errorf("redaction broke JSON: %s", got)
			}
		})
	}
}

func TestRedactEventHeaders(t *testing.T) {
	r := newRedactor(nil, nil)
	h := http.Header{
		"Authorization": {"Bearer access-123456"},
		"Cookie":        {"session=cookie-abcdef; theme=dark"},
		"Set-Cookie":    {"session=cookie-abcdef; Path=/; HttpOnly"},
		"Accept":        {"application/json"},
	}
	orig := h.Clone()
	ev := &bundle.Event{Kind: bundle.KindHTTPRequest, Header: h, URL: "/x?token=query-tok-1", Body: bundle.Text([]byte("access-123456 dark"))}
	r.event(ev, r.load())
	want := http.Header{
		"Authorization": {"Bearer [REDACTED]"},
		"Cookie":        {"session=[REDACTED]; theme=[REDACTED]"},
		"Set-Cookie":    {"session=[REDACTED]; Path=/; HttpOnly"},
		"Accept":        {"application/json"},
	}
	if diff := cmp.Diff(want, ev.Header); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(orig, h); diff != "" {
		t.Errorf("the caller's header map was modified (-want +got):\n%s", diff)
	}
	if got, want := string(ev.Body.Data), "[REDACTED] dark"; got != want {
		t.Errorf("body = %q, want %q (the bearer credential is a learned secret; short cookie values are not)", got, want)
	}
	if got, want := ev.URL, "/x?token=[REDACTED]"; got != want {
		t.Errorf("url = %q, want %q", got, want)
	}
}

func TestRedactFastPathDoesNotCopy(t *testing.T) {
	r := newRedactor([]string{"s3cret-value"}, nil)
	in := []byte(`{"_tag":"Chunk","values":[{"type":"thread.message","text":"hello"}]}`)
	out := r.text(in, r.load())
	if &out[0] != &in[0] {
		t.Error("text copied a payload that holds no secret")
	}
	if n := testing.AllocsPerRun(100, func() { r.text(in, r.load()) }); n != 0 {
		t.Errorf("text allocates %v times per clean payload, want 0", n)
	}
}

// FuzzRedactText checks that a secret never survives redaction and that valid
// JSON stays valid. Seeds come from testdata/redact.
func FuzzRedactText(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/redact/*")
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
		got := RedactText(in, []string{secret})
		if strings.Contains(got, secret) {
			t.Errorf("secret %q survived: %q -> %q", secret, in, got)
		}
		if json.Valid([]byte(in)) && !json.Valid([]byte(got)) {
			t.Errorf("redaction broke JSON: %q -> %q", in, got)
		}
	})
}

// TestRedactRecordedSession records a session full of secrets through the
// proxy and searches the decompressed bundle for every one of them.
func TestRedactRecordedSession(t *testing.T) {
	testkit.CheckLeaks(t)
	const (
		boot    = "boot-7f3a9c1e2d"
		access  = "acc-5b8e1f0a9c7d"
		refresh = "ref-abcdef123456"
		ticket  = "tkt-2c4e6a8b0d"
		cookie  = "cookie-val-1x2y3z"
		user    = "user-secret-q9w8"
	)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/oauth/token":
			r.ParseForm()
			if r.PostForm.Get("subject_token") != boot {
				http.Error(w, "bad token", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: "session", Value: cookie})
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"access_token":%q,"refresh_token":%q,"token_type":"Bearer"}`, access, refresh)
		case "/api/auth/websocket-ticket":
			if r.Header.Get("Authorization") != "Bearer "+access {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			fmt.Fprintf(w, `{"ticket":%q,"expiresAt":"2026-01-01T00:00:00Z"}`, ticket)
		case "/ws":
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			for {
				typ, b, err := c.Read(context.Background())
				if err != nil {
					return
				}
				c.Write(context.Background(), typ, append(b, " echo "+access+" "+user...))
			}
		}
	}))
	defer upstream.Close()
	r := startRecording(t, upstream.URL, &Options{Redact: []string{user}, TokenFields: t3.TokenFields})

	res, err := http.PostForm(r.URL+"/oauth/token", url.Values{"grant_type": {"x"}, "subject_token": {boot}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Access string `json:"access_token"`
	}
	json.NewDecoder(res.Body).Decode(&tok)
	res.Body.Close()
	if tok.Access != access {
		t.Fatalf("the client got access token %q through the proxy, want %q", tok.Access, access)
	}
	req, _ := http.NewRequest("POST", r.URL+"/api/auth/websocket-ticket?token="+boot, nil)
	req.Header.Set("Authorization", "Bearer "+access)
	req.Header.Set("Cookie", "session="+cookie)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tk struct{ Ticket string }
	json.NewDecoder(res.Body).Decode(&tk)
	res.Body.Close()
	if tk.Ticket != ticket {
		t.Fatalf("ticket %q, want %q", tk.Ticket, ticket)
	}
	c := dialProxy(t, r, "/ws?orchestrationProtocol=2&wsTicket="+ticket, nil)
	for _, m := range []string{
		`{"_tag":"Request","payload":{"token":"` + refresh + `"}}`,
		"plain " + user + " and " + ticket,
	} {
		c.Write(context.Background(), websocket.MessageText, []byte(m))
		if _, _, err := c.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "bye "+user)
	r.rec.Emit(&bundle.Event{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStderr, Body: bundle.Text([]byte("issued " + access + " for " + boot))})
	http.DefaultClient.CloseIdleConnections()
	evs := r.stop()

	if fi, err := os.Stat(r.path); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("bundle mode %v, want 0600", fi.Mode().Perm())
	}
	raw := decompressedBundle(t, r.path)
	for _, s := range []string{boot, access, refresh, ticket, cookie, user} {
		if i := bytes.Index(raw, []byte(s)); i >= 0 {
			t.Errorf("secret %q found in the bundle: ...%s...", s, raw[max(0, i-80):min(len(raw), i+40)])
		}
	}
	if n := bytes.Count(raw, []byte(Redacted)); n < 10 {
		t.Errorf("only %d redactions in the bundle; the session was not recorded", n)
	}
	if len(ofKinds(evs, "ws.message")) != 4 {
		t.Errorf("%d ws messages recorded, want 4", len(ofKinds(evs, "ws.message")))
	}
}
