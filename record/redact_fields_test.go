package record

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/spelling"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/redact"
)

// TestTokenFieldsOption records a session through a real proxy in which a
// server hands out a credential under a field name of its own. With the name
// in Options.TokenFields the value is learned and never reaches the bundle,
// in any spelling, wherever it comes back; without it (the defaults) it is
// recorded as it is, so the option is what redacts it.
func TestTokenFieldsOption(t *testing.T) {
	const value = "Cr3d/val+ue&<x> ü" // its spellings differ from one another
	for _, name := range []string{"sessionSecret", "api-key", "PIN_code"} {
		for _, custom := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/custom=%v", name, custom), func(t *testing.T) {
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/login" {
						w.Header().Set("Content-Type", "application/json")
						fmt.Fprintf(w, `{%q:%q,"expires":60}`, name, value)
						return
					}
					io.Copy(io.Discard, r.Body)
					w.Write([]byte("ok"))
				}))
				defer up.Close()
				var opts *Options
				if custom {
					opts = &Options{TokenFields: append([]string{name}, redact.DefaultTokenFields...)}
				}
				r := startRecording(t, up.URL, opts)
				get := func(path string, body string) {
					t.Helper()
					method := "GET"
					if body != "" {
						method = "POST"
					}
					req, _ := http.NewRequest(method, r.URL+path, strings.NewReader(body))
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				get("/login", "")
				// The learned value comes back in every spelling.
				var spelled []string
				for _, sp := range spelling.Names {
					if sp == "html" {
						continue // not a wire spelling
					}
					s := spelling.Spell(value, sp)
					spelled = append(spelled, s)
					get("/echo", `{"note":"`+s+`"}`)
				}
				// Other values stand under the name in other spellings: a
				// query parameter in upper case, a form field, JSON inside a
				// JSON string, a log line.
				others := []string{"q-val-7777", "form-val-8888", "esc-val-9999", "log-val-0000"}
				get("/q?a=1&"+strings.ToUpper(name)+"="+others[0], "")
				get("/form", "x=1&"+url.QueryEscape(name)+"="+others[1])
				get("/esc", `{"line":"{\"`+name+`\":\"`+others[2]+`\"}"}`)
				r.rec.Emit(&bundle.Event{Kind: bundle.KindProcLog, Conn: "server", Type: bundle.TypeStderr,
					Body: bundle.Text([]byte("issued " + name + ": " + others[3] + " to client"))})
				http.DefaultClient.CloseIdleConnections()
				evs := r.stop()

				raw := testkit.Decompress(t, r.path)
				var recorded strings.Builder
				for _, ev := range evs {
					recorded.WriteString(ev.URL + "\n" + string(ev.Body.Data) + "\n")
				}
				found := func(s string) bool {
					return bytes.Contains(raw, []byte(s)) || strings.Contains(recorded.String(), s)
				}
				if !custom {
					// The defaults do not know the name: the value is recorded.
					if !found(value) || !found(others[0]) {
						t.Fatalf("with the default token fields, %s's value was redacted; the test proves nothing", name)
					}
					return
				}
				for i, s := range append(spelled, others...) {
					if found(s) {
						t.Errorf("secret %q (case %d) found in the recording", s, i)
					}
				}
				if n := strings.Count(recorded.String(), redact.Redacted); n < len(spelled)+len(others) {
					t.Errorf("%d redactions in the recording, want at least %d", n, len(spelled)+len(others))
				}
			})
		}
	}
}
