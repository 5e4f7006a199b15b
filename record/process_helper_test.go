package record

import (
	"context"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

const readyLine = "startup phase: complete"

// startHelper starts the test binary in mode under supervision and stops it
// when the test ends.
func startHelper(t *testing.T, em Emitter, mode string, opts *ProcessOptions) *Process {
	t.Helper()
	o := ProcessOptions{ReadyLine: readyLine}
	if opts != nil {
		o = *opts
	}
	o.Argv = append(testkit.HelperArgv(), o.Argv...)
	o.Env = testkit.HelperEnv(mode)
	p, err := StartProcess(t.Context(), em, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	return p
}
