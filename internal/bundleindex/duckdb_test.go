package bundleindex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
)

// docSQL returns the statements of the `duckdb -c "..."` example in
// docs/storage.md.
func docSQL(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/storage.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "duckdb -c \"\n")
	if i < 0 {
		t.Fatal("docs/storage.md has no duckdb -c example")
	}
	s = s[i+len("duckdb -c \"\n"):]
	j := strings.Index(s, ";\"\n")
	if j < 0 {
		t.Fatal("the duckdb example of docs/storage.md does not end with ;\"")
	}
	sql := strings.ReplaceAll(s[:j+1], `\"`, `"`)
	var out []string
	for _, st := range strings.Split(sql, ";\n\n") {
		out = append(out, strings.TrimSpace(st))
	}
	return out
}

// TestDocQueriesWithDuckDB runs the flake-rate queries of docs/storage.md with
// DuckDB over an index of the golden corpus and requires the figures
// Stats computes. It needs node and the pinned @duckdb/node-api, which
// .ci/run installs (npm ci in testdata/duckdb); without them it skips.
func TestDocQueriesWithDuckDB(t *testing.T) {
	dir := "testdata/duckdb"
	if _, err := exec.LookPath("node"); err != nil {
		testkit.Missing(t, testkit.EnvNodeRequired, "node is not installed: the DuckDB check of docs/storage.md's queries needs it")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api")); err != nil {
		testkit.Missing(t, testkit.EnvNodeRequired, "@duckdb/node-api is not installed: run (cd internal/bundleindex/testdata/duckdb && npm ci)")
	}
	var entries []Entry
	paths, _ := filepath.Glob(filepath.Join(golden, "*.zst"))
	live, _ := filepath.Glob(filepath.Join(golden, "live", "*.zst"))
	for _, p := range append(paths, live...) {
		entries = append(entries, summarize(t, p))
	}
	work := t.TempDir()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range entries {
		enc.Encode(e)
	}
	if err := os.WriteFile(filepath.Join(work, "index.ndjson"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join(dir, "query.mjs"))
	cmd := exec.CommandContext(context.Background(), "node", append([]string{script, work}, docSQL(t)...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two result sets, got:\n%s", out)
	}
	var perScenario, perCheck [][]any
	if err := json.Unmarshal([]byte(lines[0]), &perScenario); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &perCheck); err != nil {
		t.Fatal(err)
	}
	scen, chk := Stats(entries)
	var wantScen, wantChk [][]string
	for _, s := range scen {
		wantScen = append(wantScen, []string{s.Scenario, fmt.Sprint(s.Runs), fmt.Sprint(s.Passed), fmt.Sprint(s.Failed), fmt.Sprintf("%.1f", 100*s.FailRate), fmt.Sprint(s.Flaky)})
	}
	for _, c := range chk {
		wantChk = append(wantChk, []string{c.Scenario, c.Check, fmt.Sprint(c.Failures), fmt.Sprint(c.Runs), fmt.Sprintf("%.1f", 100*c.Rate)})
	}
	if diff := cmp.Diff(wantScen, rowStrings(perScenario)); diff != "" {
		t.Errorf("per scenario (-wireproof +duckdb):\n%s", diff)
	}
	if diff := cmp.Diff(wantChk, rowStrings(perCheck)); diff != "" {
		t.Errorf("per check (-wireproof +duckdb):\n%s", diff)
	}
}

// rowStrings prints DuckDB's values as Stats' are printed above: counts
// (BIGINT) come as strings, rounded percentages as numbers.
func rowStrings(rows [][]any) [][]string {
	var out [][]string
	for _, r := range rows {
		var row []string
		for _, v := range r {
			if f, ok := v.(float64); ok {
				row = append(row, fmt.Sprintf("%.1f", f))
				continue
			}
			row = append(row, fmt.Sprint(v))
		}
		out = append(out, row)
	}
	return out
}
