package assert_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/internal/testkit"
)

// docs/checks.md documents every check with the message it fails with, in
// the catalogue's order, so the documentation cannot drift from the code
// silently.
func TestChecksDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| ([^|]+) \\|")
	var doc, want [][2]string
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		doc = append(doc, [2]string{m[1], strings.TrimSpace(m[2])})
	}
	for _, c := range assert.Catalogue() {
		want = append(want, [2]string{c.ID, c.Message})
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("docs/checks.md's rows differ from assert.Catalogue() (-catalogue +doc):\n%s", diff)
	}
}

const (
	tableBegin = "<!-- catalogue: generated from assert.Catalogue(); go test ./assert -run TestCatalogueTable -update -->\n"
	tableEnd   = "<!-- end of catalogue -->\n"
)

// catalogueTable renders the catalogue as the markdown table of
// docs/architecture.md.
func catalogueTable() string {
	var b strings.Builder
	b.WriteString("| suite | stage | id | message |\n|---|---|---|---|\n")
	for _, c := range assert.Catalogue() {
		b.WriteString("| " + c.Suite + " | " + string(c.Stage) + " | `" + c.ID + "` | " + c.Message + " |\n")
	}
	return b.String()
}

// TestCatalogueTable: docs/architecture.md's table of checks is the
// catalogue, row for row (-update rewrites it).
func TestCatalogueTable(t *testing.T) {
	const path = "../docs/architecture.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, tableBegin), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated check table (between %q and %q)", path, strings.TrimSpace(tableBegin), strings.TrimSpace(tableEnd))
	}
	got, want := doc[i+len(tableBegin):j], catalogueTable()
	if testkit.Update() && got != want { // rewrite docs/architecture.md's check table from the catalogue
		if err := os.WriteFile(path, []byte(doc[:i+len(tableBegin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s's check table differs from assert.Catalogue() (-catalogue +doc); run go test ./assert -run TestCatalogueTable -update:\n%s", path, diff)
	}
}

// TestCatalogue: every check id is listed once, with a message and the
// stage of the list it is in.
func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range assert.Catalogue() {
		if seen[c.ID] {
			t.Errorf("check %s listed twice", c.ID)
		}
		seen[c.ID] = true
		if c.Message == "" || c.Stage == "" || c.Suite == "" {
			t.Errorf("incomplete row %+v", c)
		}
		if got, ok := assert.Lookup(c.ID); !ok || got != c {
			t.Errorf("Lookup(%q) = %+v, %v", c.ID, got, ok)
		}
	}
	if _, ok := assert.Lookup("no-such-check"); ok {
		t.Error("Lookup found an unknown check")
	}
	bd := assert.BackgroundDelivery
	stages := []struct {
		stage assert.Stage
		infos []assert.CheckInfo
	}{
		{assert.StageObservation, bd.Observation.Infos("")}, {assert.StageFinal, bd.Main.Infos("")},
		{assert.StageNested, bd.Nested.Infos("")}, {assert.StageClosing, bd.Closing.Infos("")},
		{assert.StageRestart, bd.Restart.Infos("")}, {assert.StageRun, bd.Run.Infos("")},
		{assert.StageEvent, assert.Conformance.Infos("")},
	}
	for _, s := range stages {
		for _, c := range s.infos {
			if c.Stage != s.stage {
				t.Errorf("check %s is in the %s list but says stage %s", c.ID, s.stage, c.Stage)
			}
		}
	}
}
