package t3_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/redact"
	"github.com/wireproof/wireproof/t3"
)

// TestTokenFieldsHoldDefaults: t3.TokenFields is the whole set a T3
// recording redacts (verify, playback, record and the HAR export pass it as
// it is), so it holds every generic OAuth name of redact.DefaultTokenFields,
// and each of its names is one the redactor can find.
func TestTokenFieldsHoldDefaults(t *testing.T) {
	for _, n := range redact.DefaultTokenFields {
		if !slices.ContainsFunc(t3.TokenFields, func(m string) bool { return strings.EqualFold(m, n) }) {
			t.Errorf("t3.TokenFields %q lacks the generic token field %q", t3.TokenFields, n)
		}
	}
	for _, n := range t3.TokenFields {
		if !redact.IsTokenFieldName(n) {
			t.Errorf("t3.TokenFields holds %q, which no redactor can find as a field", n)
		}
	}
}
