package interop

import (
	"os"
	"testing"

	"github.com/wireproof/wireproof/provider/claude"
)

// TestMain lets this test binary play the provider processes the in-process
// fixture server starts (as os.Args[0] provider claude ...).
func TestMain(m *testing.M) {
	claude.HelperMain()
	os.Exit(m.Run())
}
