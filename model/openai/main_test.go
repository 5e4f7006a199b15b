package openai_test

import (
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

// TestMain fails the tests if a goroutine they started outlives them.
func TestMain(m *testing.M) { testkit.Main(m, nil) }
