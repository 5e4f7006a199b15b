package verify

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// localPortRange is where the kernel keeps its ephemeral ports: every
// listener on port 0 and every outgoing connection takes its port from it.
const localPortRange = "/proc/sys/net/ipv4/ip_local_port_range"

// reservePort chooses a free loopback port for the server to bind and gives
// it back. The server binds it later, after the reservation is released (and
// binds it again after a restart), so the port is chosen below the kernel's
// ephemeral range: in the meantime no other listener on port 0 and no
// outgoing connection of this machine (a parallel run's proxy, a test's
// client) can be given it. Where the range is unknown, or nothing below it
// is free, it falls back to an ephemeral port. A bind race that remains
// fails the run; it never falls back to an existing server.
func reservePort() (int, error) {
	if low, ok := ephemeralLow(); ok && low > 1024+1024 {
		// [low/2, low): 16384-32767 with Linux's default range.
		base, span := low/2, low-low/2
		for range 32 {
			port := base + rand.IntN(span)
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				continue
			}
			return port, l.Close()
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("reserving a port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// ephemeralLow is the lowest port of the kernel's ephemeral range.
func ephemeralLow() (int, bool) {
	b, err := os.ReadFile(localPortRange)
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(f[0])
	return low, err == nil
}
