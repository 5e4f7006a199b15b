package httphop

import (
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

// TestMain fails the tests if a goroutine or a process they started outlives
// them.
func TestMain(m *testing.M) { testkit.Main(m, nil) }
