package testkit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// LeanAgrees holds a lean decoder to encoding/json on one input: when the
// decoder named what accepted input (leanOK), encoding/json must have too
// (refErr nil) and decoded the same (refGot, cmp.Diff with opts). It records
// in accepted which decoders accepted input.
func LeanAgrees(t testing.TB, accepted map[string]bool, input []byte, what string, leanOK bool, leanGot any, refErr error, refGot any, opts ...cmp.Option) {
	t.Helper()
	if !leanOK {
		return
	}
	accepted[what] = true
	if refErr != nil {
		t.Errorf("%s: lean accepted %q, encoding/json refused it: %v", what, input, refErr)
		return
	}
	if diff := cmp.Diff(refGot, leanGot, opts...); diff != "" {
		t.Errorf("%s of %q (-encoding/json +lean):\n%s", what, input, diff)
	}
}
