package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readRepoFile reads a file at the repository's root.
func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADME holds the README to what it is for (issue 20): at most 200
// lines, the two set-up commands of a fresh machine, the test command the
// same one .ci/run runs, and a row for every verb, each also in
// docs/cli.md, where the reference is.
func TestREADME(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	lines := strings.Split(strings.TrimSuffix(readme, "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines, want at most 200: reference material goes to docs/", len(lines))
	}
	const mainJob, tests = "go run ./cmd/wireproof verify", "go test -race ./..."
	for _, cmd := range []string{mainJob, tests} {
		if !slices.Contains(lines, "    "+cmd) {
			t.Errorf("README.md does not give the set-up command %q as a line of its own", cmd)
		}
	}
	// .ci/run ends with the README's test command.
	var last string
	for _, l := range strings.Split(readRepoFile(t, ".ci/run"), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			last = l
		}
	}
	if last != tests {
		t.Errorf(".ci/run ends with %q, want the README's test command %q", last, tests)
	}
	cli := readRepoFile(t, "docs/cli.md")
	for _, c := range newRootCommand().Commands() {
		verb := c.Name()
		if verb == "help" || verb == "completion" || c.Hidden {
			continue
		}
		if !strings.Contains(readme, "\n| [`"+verb+"`](") {
			t.Errorf("README.md's table of verbs has no row for %s", verb)
		}
		if !strings.Contains(cli, "wireproof "+verb) {
			t.Errorf("docs/cli.md does not describe wireproof %s", verb)
		}
	}
}
