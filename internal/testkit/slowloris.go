package testkit

import (
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// HalfSentHeader opens a connection to the HTTP server at url (http://...)
// and sends half a request header, as a slowloris client does; drop, called
// once the server's header timeout has had time to pass, reports whether
// the server has closed the connection (it waits up to 20 s for that, far
// longer than a test's timeout, so that a true answer never rests on
// timing).
func HalfSentHeader(t testing.TB, url string) (drop func() bool) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET /a HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	return func() bool {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, err := io.ReadAll(c)
		return !errors.Is(err, os.ErrDeadlineExceeded)
	}
}
