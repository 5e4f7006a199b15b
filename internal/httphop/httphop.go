// Package httphop holds the HTTP hop-by-hop rules shared by the recording
// proxy and the playback server: which headers belong to one connection
// only, and how a WebSocket upgrade is recognised.
package httphop

import (
	"net/http"
	"strings"
)

// isHop reports whether the header named k (canonical) is meaningful for
// one connection only, and so is not forwarded or replayed.
func isHop(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// Remove deletes hop-by-hop headers, including those named by Connection,
// from h.
//
// A header holds a few names, so they are looked up among the hop-by-hop
// ones rather than each of those deleted from h: nine hashed deletes per
// request and response cost the proxy about a microsecond an exchange.
func Remove(h http.Header) {
	for _, f := range h["Connection"] {
		for _, name := range strings.Split(f, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for k := range h {
		if isHop(k) {
			delete(h, k)
		}
	}
}

// HasToken reports whether any comma-separated element of h's key values,
// without its ";" parameters, equals token (case-insensitively).
func HasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if t, _, _ = strings.Cut(t, ";"); strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// IsWebSocketUpgrade reports whether r asks to upgrade to a WebSocket.
func IsWebSocketUpgrade(r *http.Request) bool {
	return HasToken(r.Header, "Connection", "upgrade") && HasToken(r.Header, "Upgrade", "websocket")
}
