package assert_test

import (
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/assert"
)

// docs/checks.md documents every check with the message it fails with, so the
// documentation cannot drift from the code silently.
func TestChecksDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	ids := make([]string, 0, len(assert.Messages))
	for id := range assert.Messages {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		row := "| `" + id + "` | " + assert.Messages[id] + " |"
		if !strings.Contains(doc, row) {
			t.Errorf("docs/checks.md has no row %q", row)
		}
	}
}
