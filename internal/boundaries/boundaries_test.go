// Package boundaries holds the package rules of docs/architecture.md as
// tests: the package table (which package imports which of ours) and what
// the binary, the test API, the fixture server and playback may link.
package boundaries_test

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, nil) }

const mod = "github.com/wireproof/wireproof/"

// pkg is one package of the module as go list sees it: its imports, and
// its tests' imports, of this module (without the module's prefix).
type pkg struct {
	imports, testImports []string
}

// listPackages lists the module's packages.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, mod+"...").Output()
	if err != nil {
		t.Fatalf("go list %s...: %v", mod, err)
	}
	ours := func(list, self string) []string {
		var o []string
		for _, p := range strings.Fields(list) {
			if p, ok := strings.CutPrefix(p, mod); ok && p != self && !slices.Contains(o, p) {
				o = append(o, p)
			}
		}
		slices.Sort(o)
		return o
	}
	pkgs := map[string]pkg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		name := strings.TrimPrefix(f[0], mod)
		pkgs[name] = pkg{imports: ours(f[1], name), testImports: ours(f[2], name)}
	}
	return pkgs
}

// row is one row of the package table: the packages it names and the
// imports of ours it says they have.
type row struct {
	line      int
	names     []string
	imports   []string // sorted; nil for "none"
	all       bool     // "all": not checked
	testsOnly bool     // "tests only: ...": the packages are tests; imports are their tests'
}

// packageTable reads the table under "## Packages" in docs/architecture.md.
func packageTable(t *testing.T) []row {
	t.Helper()
	f, err := os.Open("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case l == "## Packages":
			in = true
			continue
		case in && strings.HasPrefix(l, "## "):
			in = false
		}
		if !in || !strings.HasPrefix(l, "| `") {
			continue
		}
		cols := strings.Split(strings.Trim(l, "|"), " | ")
		if len(cols) < 3 {
			t.Fatalf("architecture.md:%d: a row of the package table without three columns", n)
		}
		r := row{line: n}
		for i, s := range strings.Split(cols[0], "`") {
			if i%2 == 1 {
				r.names = append(r.names, s)
			}
		}
		imp := strings.TrimSpace(cols[len(cols)-1])
		if i := strings.Index(imp, " ("); i >= 0 {
			imp = imp[:i] // a remark
		}
		imp, r.testsOnly = strings.CutPrefix(imp, "tests only: ")
		switch imp {
		case "all":
			r.all = true
		case "none":
		default:
			r.imports = strings.Split(imp, ", ")
			slices.Sort(r.imports)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md has no package table under ## Packages")
	}
	return rows
}

// TestPackageTable: docs/architecture.md's package table is true. Every
// package of the module has a row, every row names packages that exist,
// and a row's imports of ours are exactly what its packages import (their
// tests' imports for a "tests only" row; internal/testkit, which every
// package's tests import, is not listed).
func TestPackageTable(t *testing.T) {
	pkgs := listPackages(t)
	seen := map[string]bool{}
	for _, r := range packageTable(t) {
		for _, name := range r.names {
			seen[name] = true
			p, ok := pkgs[name]
			if !ok {
				t.Errorf("architecture.md:%d: the package table names %s, which is not a package of the module", r.line, name)
				continue
			}
			if r.all {
				continue
			}
			got := p.imports
			if r.testsOnly {
				if len(p.imports) > 0 {
					t.Errorf("architecture.md:%d: %s is \"tests only\" but its non-test code imports %s", r.line, name, strings.Join(p.imports, ", "))
				}
				got = slices.DeleteFunc(slices.Clone(p.testImports), func(s string) bool { return s == "internal/testkit" })
			}
			if !slices.Equal(got, r.imports) {
				t.Errorf("architecture.md:%d: %s imports %s of ours; the package table says %s", r.line, name, list(got), list(r.imports))
			}
		}
	}
	for name := range pkgs {
		if !seen[name] {
			t.Errorf("package %s has no row in docs/architecture.md's package table", name)
		}
	}
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// deps is what pkg links: go list -deps.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestPackageBoundaries: what the shipped binary, the Go test API, the
// fixture server and playback may link. Each rule names a package the
// linker must see, so a rule that lists the wrong packages fails too.
func TestPackageBoundaries(t *testing.T) {
	rules := []struct {
		pkg    string
		why    string
		links  string   // a package it must link (the rule's sanity check)
		never  []string // import path prefixes it must not link (module-relative for ours)
		onlyOf []string // when set: the only packages of ours it may link
	}{
		{pkg: "cmd/wireproof", why: "the binary links no generator, corpus or test helper", links: mod + "replay",
			never: []string{mod + "replay/synth", mod + "fixtures/corpus", mod + "internal/testkit", "go.uber.org/goleak"}},
		{pkg: "wireprooftest", why: "the Go test API records and plays back; it links neither the judge, nor the viewer, nor storage, nor a database or a browser", links: mod + "playback",
			never: []string{mod + "replay", mod + "assert", mod + "view", mod + "triage", mod + "internal/objstore", mod + "internal/spool",
				"github.com/minio/", "modernc.org/sqlite", "github.com/chromedp/"}},
		{pkg: "playback", why: "serving a recording does not link the judge", links: mod + "protocol/effectrpc",
			never: []string{mod + "replay", mod + "assert"}},
		{pkg: "view", why: "the offline viewer redacts with package redact; it links neither the proxy nor the process supervisor", links: mod + "redact",
			never: []string{mod + "record"}},
		{pkg: "triage", why: "the HAR export redacts with package redact, not the recorder", links: mod + "redact",
			never: []string{mod + "record"}},
		{pkg: "fixtures", why: "the fixture server speaks the protocol; it knows no check", links: mod + "t3",
			onlyOf: []string{"fixtures", "t3", "protocol/effectrpc", "internal/jsonscan", "internal/regfile", "internal/repeat", "bundle", "provider/claude"}},
	}
	for _, r := range rules {
		d := deps(t, r.pkg)
		if !slices.Contains(d, r.links) {
			t.Errorf("%s does not link %s: the rule (%s) lists the wrong packages", r.pkg, r.links, r.why)
		}
		for _, p := range d {
			for _, never := range r.never {
				if p == never || strings.HasPrefix(p, never) && (strings.HasSuffix(never, "/") || strings.HasPrefix(p, never+"/")) {
					t.Errorf("%s links %s (%s)", r.pkg, p, r.why)
				}
			}
			if ours, ok := strings.CutPrefix(p, mod); ok && r.onlyOf != nil && !slices.Contains(r.onlyOf, ours) {
				t.Errorf("%s links %s; only %s of ours (%s)", r.pkg, ours, strings.Join(r.onlyOf, ", "), r.why)
			}
		}
	}
}

// TestTestkitOnlyInTests: the shared test helpers are for tests only: no
// package imports them (or goleak) outside its _test.go files.
func TestTestkitOnlyInTests(t *testing.T) {
	for name, p := range listPackages(t) {
		if name != "internal/testkit" && slices.Contains(p.imports, "internal/testkit") {
			t.Errorf("%s imports internal/testkit outside its tests", name)
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, "go.uber.org/goleak") && f[0] != mod+"internal/testkit" {
				t.Errorf("%s imports %s outside its tests", f[0], imp)
			}
		}
	}
}
