package t3_test

import (
	"errors"
	"testing"
	"time"

	"github.com/wireproof/wireproof/fixtures"
	"github.com/wireproof/wireproof/t3"
)

// TestSerializationMismatch runs the client against the real fixture server
// set to the other serialization: the failure names the mismatch instead of
// blaming missing Pongs.
func TestSerializationMismatch(t *testing.T) {
	for _, tc := range []struct {
		server, client string
		seen           string // what the server was seen to speak, "" when only suspected
	}{
		{server: "json", client: "ndjson", seen: "json"},
		{server: "ndjson", client: "json", seen: ""},
	} {
		t.Run("server "+tc.server+" client "+tc.client, func(t *testing.T) {
			ctx := testCtx(t)
			srv, err := fixtures.Start(ctx, &fixtures.ServerOptions{
				Bootstrap:     t3.Bootstrap{Host: "127.0.0.1", T3Home: t.TempDir(), DesktopBootstrapToken: "boot"},
				Serialization: tc.server,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			c := t3.NewClient(srv.URL(), nil)
			if _, err := c.ExchangeToken(ctx, "boot"); err != nil {
				t.Fatal(err)
			}
			ticket, err := c.WebSocketTicket(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rpc, err := c.DialRPC(ctx, ticket, &t3.RPCOptions{Serialization: tc.client, PingInterval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer rpc.Close()
			err = rpc.Call(ctx, t3.MethodGetProjection, map[string]string{"threadId": "t1"}, nil)
			var mm *t3.SerializationMismatchError
			if !errors.As(err, &mm) {
				t.Fatalf("Call = %v, want a SerializationMismatchError", err)
			}
			if mm.Client != tc.client || mm.Server != tc.seen {
				t.Errorf("mismatch %+v, want client %s, server %q", mm, tc.client, tc.seen)
			}
			t.Log(err)
		})
	}
}
