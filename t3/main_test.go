package t3_test

import (
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

// TestMain fails the tests if a client or test server goroutine outlives
// them.
func TestMain(m *testing.M) { testkit.Main(m, nil) }
