package verify_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/spelling"
	"github.com/wireproof/wireproof/t3"
)

// tokenFieldValue finds the value given to any of T3's token fields in text:
// "name":"value", \"name\":\"value\", name=value, name: value.
var tokenFieldValue = func() *regexp.Regexp {
	names := make([]string, len(t3.TokenFields))
	for i, n := range t3.TokenFields {
		names[i] = regexp.QuoteMeta(n)
	}
	return regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_-])(` + strings.Join(names, "|") + `)(?:\\?")?\s*[:=]\s*(?:\\?")?([^"\\&\s,;{}]*)`)
}()

// checkTokenFields fails the test if a value of one of T3's token fields
// (t3.TokenFields, which verify gives its recorder) was recorded: every such
// field in every URL, header, body and attribute holds "[REDACTED]" (or a
// JSON null, or a value that is no string, which is not a credential).
func checkTokenFields(t *testing.T, events []bundle.Event) {
	t.Helper()
	for _, ev := range events {
		texts := []string{ev.URL, string(ev.Body.Data), string(ev.Attrs)}
		for _, vs := range ev.Header {
			texts = append(texts, vs...)
		}
		for _, s := range texts {
			for _, m := range tokenFieldValue.FindAllStringSubmatch(s, -1) {
				if v := m[2]; v != "" && v != "[REDACTED]" && v != "null" {
					t.Errorf("@%d %s: token field %s recorded with value %q", ev.Seq, ev.Kind, m[1], v)
				}
			}
		}
	}
}

// checkSecretSpellings fails the test if secret is in raw in any spelling it
// may take on the wire.
func checkSecretSpellings(t *testing.T, raw []byte, secret string) {
	t.Helper()
	seen := map[string]bool{}
	for _, sp := range spelling.Names {
		s := spelling.Spell(secret, sp)
		if seen[s] {
			continue
		}
		seen[s] = true
		if strings.Contains(string(raw), s) {
			t.Errorf("credential %q found spelled %s (%q) in the decompressed bundle", secret, sp, s)
		}
	}
}
