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
	"testing"

	"github.com/coder/websocket"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/redact"
	"github.com/wireproof/wireproof/t3"
)

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
	raw := testkit.Decompress(t, r.path)
	for _, s := range []string{boot, access, refresh, ticket, cookie, user} {
		if i := bytes.Index(raw, []byte(s)); i >= 0 {
			t.Errorf("secret %q found in the bundle: ...%s...", s, raw[max(0, i-80):min(len(raw), i+40)])
		}
	}
	if n := bytes.Count(raw, []byte(redact.Redacted)); n < 10 {
		t.Errorf("only %d redactions in the bundle; the session was not recorded", n)
	}
	if len(ofKinds(evs, "ws.message")) != 4 {
		t.Errorf("%d ws messages recorded, want 4", len(ofKinds(evs, "ws.message")))
	}
}
