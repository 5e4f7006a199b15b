package verify

import (
	"net"
	"strconv"
	"testing"
)

// TestReservePortBelowEphemeralRange: the server's port is bindable and, where
// the kernel says where its ephemeral ports are, below them, so no port-0
// listener or outgoing connection can take it before the server binds it.
func TestReservePortBelowEphemeralRange(t *testing.T) {
	low, known := ephemeralLow()
	seen := map[int]bool{}
	for range 20 {
		port, err := reservePort()
		if err != nil {
			t.Fatal(err)
		}
		seen[port] = true
		if known && (port >= low || port < low/2) {
			t.Errorf("port %d is outside [%d, %d): the kernel may give it to a port-0 listener", port, low/2, low)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("the reserved port %d cannot be bound: %v", port, err)
		}
		l.Close()
	}
	if len(seen) < 2 {
		t.Errorf("20 reservations gave one port, %v: parallel runs would collide", seen)
	}
}
