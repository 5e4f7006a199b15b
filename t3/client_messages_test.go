package t3_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wireproof/wireproof/redact"
	"github.com/wireproof/wireproof/t3"
)

// TestClientErrorsSurviveRedaction: the client's errors about a request
// whose path ends in a token field's name (/oauth/token) are unchanged by the redaction a recording
// applies to them (t3.TokenFields): no "token: value" shape in them.
func TestClientErrorsSurviveRedaction(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		call   func(*t3.Client) error
	}{
		{"token exchange answered 502", http.StatusBadGateway, "wireproof: upstream: dial tcp: connection refused",
			func(c *t3.Client) error { _, err := c.ExchangeToken(context.Background(), "boot"); return err }},
		{"token exchange answered HTML", http.StatusOK, "<html>not json</html>",
			func(c *t3.Client) error { _, err := c.ExchangeToken(context.Background(), "boot"); return err }},
		{"token exchange answered 503 with a tagged error", http.StatusServiceUnavailable, `{"code":"unavailable","reason":"starting"}`,
			func(c *t3.Client) error { _, err := c.ExchangeToken(context.Background(), "boot"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			err := tt.call(t3.NewClient(srv.URL, nil))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if got := redact.Text(msg, &redact.Options{TokenFields: t3.TokenFields}); got != msg {
				t.Errorf("redacted, the error\n  %s\nreads\n  %s", msg, got)
			}
		})
	}
}
