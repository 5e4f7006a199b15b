package redact

import (
	"encoding/base64"
	"net/http"
	"strings"
)

func isCredentialHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", apiKeyHeader:
		return true
	}
	return false
}

// apiKeyHeader carries an API key whole (Anthropic's Messages API, which a
// Claude CLI calls with its ANTHROPIC_API_KEY, and many others).
const apiKeyHeader = "X-Api-Key"

// credentialValues returns the secret parts of a credential header value: the
// credentials after the scheme, or every cookie value.
func credentialValues(k, v string) []string {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Proxy-Authorization":
		if scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			cred = strings.TrimSpace(cred)
			out := []string{cred}
			// Basic credentials are base64 of user:password: the password
			// (and the pair) are secrets wherever they show up decoded.
			if strings.EqualFold(scheme, "Basic") {
				if dec, err := base64.StdEncoding.DecodeString(cred); err == nil {
					out = append(out, string(dec))
					if _, pass, ok := strings.Cut(string(dec), ":"); ok {
						out = append(out, pass)
					}
				}
			}
			return out
		}
		return []string{strings.TrimSpace(v)}
	case "Set-Cookie":
		first, _, _ := strings.Cut(v, ";")
		if _, val, ok := strings.Cut(first, "="); ok {
			return []string{strings.Trim(strings.TrimSpace(val), `"`)}
		}
	case "Cookie":
		var out []string
		for _, part := range strings.Split(v, ";") {
			if _, val, ok := strings.Cut(part, "="); ok {
				out = append(out, strings.Trim(strings.TrimSpace(val), `"`))
			}
		}
		return out
	case apiKeyHeader:
		return []string{strings.TrimSpace(v)}
	}
	return nil
}

// maskCredential keeps the shape of a credential header (the auth scheme, the
// cookie names and attributes) and replaces the secret parts.
func maskCredential(k, v string) string {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Proxy-Authorization":
		if scheme, _, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			return scheme + " " + Redacted
		}
		return Redacted
	case "Set-Cookie":
		first, rest, hasRest := strings.Cut(v, ";")
		name, _, ok := strings.Cut(first, "=")
		if !ok {
			return Redacted
		}
		if hasRest {
			return name + "=" + Redacted + ";" + rest
		}
		return name + "=" + Redacted
	case "Cookie":
		parts := strings.Split(v, ";")
		for i, part := range parts {
			if name, _, ok := strings.Cut(part, "="); ok {
				parts[i] = name + "=" + Redacted
			} else {
				parts[i] = Redacted
			}
		}
		return strings.Join(parts, ";")
	case apiKeyHeader:
		return Redacted
	}
	return v
}
