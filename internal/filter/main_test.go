package filter

import (
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, nil) }
