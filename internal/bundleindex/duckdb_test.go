package bundleindex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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

// TestDocQueriesWithDuckDB runs the queries of docs/storage.md with DuckDB
// over an index of the golden corpus and requires the figures Stats
// computes and the cut or dirty bundles the entries name; once over the
// whole corpus (one bundle in it is cut, fault-injected runs beside clean
// ones) and once over its live part alone, where no bundle is truncated or
// dirty: there `WHERE truncated OR dirty` binds only because every line
// carries every field. It needs node and the pinned @duckdb/node-api, which
// .ci/run installs (npm ci in testdata/duckdb); without them it skips (it
// fails under WIREPROOF_TEST_NODE_REQUIRED).
func TestDocQueriesWithDuckDB(t *testing.T) {
	dir := "testdata/duckdb"
	if _, err := exec.LookPath("node"); err != nil {
		testkit.Missing(t, testkit.EnvNodeRequired, "node is not installed: the DuckDB check of docs/storage.md's queries needs it")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api")); err != nil {
		testkit.Missing(t, testkit.EnvNodeRequired, "@duckdb/node-api is not installed: run (cd internal/bundleindex/testdata/duckdb && npm ci)")
	}
	paths, _ := filepath.Glob(filepath.Join(golden, "*.zst"))
	live, _ := filepath.Glob(filepath.Join(golden, "live", "*.zst"))
	var all, clean []Entry
	for _, p := range append(paths, live...) {
		all = append(all, summarize(t, p))
	}
	for _, p := range live {
		clean = append(clean, summarize(t, p))
	}
	var cut, faulted int
	for _, e := range all {
		if e.Truncated {
			cut++
		}
		if e.Fault != "" {
			faulted++
		}
	}
	if cut == 0 || faulted == 0 {
		t.Fatalf("the golden corpus no longer has a cut bundle (%d) and fault-injected runs (%d): the queries are not tested on them", cut, faulted)
	}
	for _, e := range clean {
		if e.Truncated || e.Dirty {
			t.Fatalf("the live corpus is no longer clean: %s", e.Path)
		}
	}
	t.Run("corpus", func(t *testing.T) { duckDBMatchesStats(t, dir, all) })
	t.Run("clean", func(t *testing.T) { duckDBMatchesStats(t, dir, clean) })
}

// duckDBMatchesStats writes entries as an index and requires DuckDB's
// answers to the doc's queries to be Stats' figures and the entries'
// cut or dirty bundles.
func duckDBMatchesStats(t *testing.T, dir string, entries []Entry) {
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
	if len(lines) != 3 {
		t.Fatalf("want three result sets, got:\n%s", out)
	}
	var perScenario, perCheck, flagged [][]any
	for i, dst := range []*[][]any{&perScenario, &perCheck, &flagged} {
		if err := json.Unmarshal([]byte(lines[i]), dst); err != nil {
			t.Fatal(err)
		}
	}
	scen, chk := Stats(entries)
	wantScen, wantChk, wantFlagged := [][]string{}, [][]string{}, [][]string{}
	for _, s := range scen {
		wantScen = append(wantScen, []string{s.Scenario, fmt.Sprint(s.Runs), fmt.Sprint(s.Passed), fmt.Sprint(s.Failed), fmt.Sprintf("%.1f", 100*s.FailRate), fmt.Sprint(s.Flaky)})
	}
	for _, c := range chk {
		wantChk = append(wantChk, []string{c.Scenario, c.Check, fmt.Sprint(c.Failures), fmt.Sprint(c.Runs), fmt.Sprintf("%.1f", 100*c.Rate)})
	}
	for _, e := range entries {
		if e.Truncated || e.Dirty {
			wantFlagged = append(wantFlagged, []string{e.Path, fmt.Sprint(e.Truncated), fmt.Sprint(e.Dirty)})
		}
	}
	sort.Slice(wantFlagged, func(i, j int) bool { return wantFlagged[i][0] < wantFlagged[j][0] })
	if diff := cmp.Diff(wantScen, rowStrings(perScenario)); diff != "" {
		t.Errorf("per scenario (-wireproof +duckdb):\n%s", diff)
	}
	if diff := cmp.Diff(wantChk, rowStrings(perCheck)); diff != "" {
		t.Errorf("per check (-wireproof +duckdb):\n%s", diff)
	}
	if diff := cmp.Diff(wantFlagged, rowStrings(flagged)); diff != "" {
		t.Errorf("cut or dirty bundles (-wireproof +duckdb):\n%s", diff)
	}
}

// rowStrings prints DuckDB's values as Stats' are printed above: counts
// (BIGINT) come as strings, rounded percentages as numbers.
func rowStrings(rows [][]any) [][]string {
	out := [][]string{}
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
