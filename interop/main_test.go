package interop

import (
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/provider/claude"
)

// TestMain lets this test binary play the provider processes the in-process
// fixture server starts (as os.Args[0] provider claude ...).
func TestMain(m *testing.M) {
	claude.HelperMain()
	testkit.Main(m, nil)
}
