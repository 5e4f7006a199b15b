// Package scrub recognises what differs between two equally good runs of the
// same client against the same server: ids the client or server makes
// (UUIDs), loopback ports chosen per run, timestamps, and the run's secret.
// diff blanks them to compare two runs' stories; playback unifies them to
// match a live client's requests with recorded ones.
package scrub

import (
	"regexp"
	"strings"
)

// UUID matches the ids T3 hands out (and most clients make).
var UUID = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// Loopback matches a loopback address with its port ($1 is the host): the
// gate and the server listen on a port chosen per run, so the port is an id
// too.
var Loopback = regexp.MustCompile(`(127\.0\.0\.1|localhost|\[::1\]):[0-9]+`)

// Time matches an RFC 3339 timestamp, as JSON encoders write them.
var Time = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})`)

// Text replaces the secret (when not empty) by <SECRET>, UUIDs by <ID> and
// loopback ports by <PORT> in s.
func Text(s, secret string) string {
	if secret != "" {
		s = strings.ReplaceAll(s, secret, "<SECRET>")
	}
	s = UUID.ReplaceAllString(s, "<ID>")
	return Loopback.ReplaceAllString(s, "$1:<PORT>")
}
