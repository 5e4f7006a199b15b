package replay_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/architecture.md's example blocks from their Example sources")

// declSource returns the source of the named top-level declarations of a Go
// file, without their doc comments, in file order and separated by a blank
// line: a function, or a type with its methods.
func declSource(path string, names []string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	found := map[string]bool{}
	var parts []string
	for _, d := range f.Decls {
		name := ""
		switch d := d.(type) {
		case *ast.FuncDecl:
			name = d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				t := d.Recv.List[0].Type
				if s, ok := t.(*ast.StarExpr); ok {
					t = s.X
				}
				if id, ok := t.(*ast.Ident); ok {
					name = id.Name
				}
			}
		case *ast.GenDecl:
			if d.Tok == token.TYPE && len(d.Specs) == 1 {
				name = d.Specs[0].(*ast.TypeSpec).Name.Name
			}
		}
		if want[name] {
			found[name] = true
			parts = append(parts, string(src[d.Pos()-f.FileStart:d.End()-f.FileStart]))
		}
	}
	for _, n := range names {
		if !found[n] {
			return "", fmt.Errorf("%s declares no %s", path, n)
		}
	}
	return strings.Join(parts, "\n\n") + "\n", nil
}

// exampleBlock is a marker line naming a file and declarations, followed
// by the fenced Go block that shows them.
var exampleBlock = regexp.MustCompile("(?m)^<!-- example: (\\S+) ([^>]+) -->\n```go\n((?s:.*?))```\n")

// TestArchitectureExamples: every worked example in docs/architecture.md is
// the source of its Example test (so it compiles and its output is
// checked), and the four kinds of extension each have one.
func TestArchitectureExamples(t *testing.T) {
	const doc = "../docs/architecture.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	var out bytes.Buffer
	last := 0
	for _, m := range exampleBlock.FindAllSubmatchIndex(b, -1) {
		file, names, block := string(b[m[2]:m[3]]), strings.Fields(string(b[m[4]:m[5]])), string(b[m[6]:m[7]])
		want, err := declSource(filepath.Join("..", file), names)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, n := range names {
			shown[n] = true
		}
		out.Write(b[last:m[6]])
		out.WriteString(want)
		last = m[7]
		if !*updateDocs {
			if diff := cmp.Diff(want, block); diff != "" {
				t.Errorf("%s: the example %s %v differs from its source (-source +doc); go test ./replay -run TestArchitectureExamples -update-docs rewrites it:\n%s", doc, file, names, diff)
			}
		}
	}
	out.Write(b[last:])
	if *updateDocs && !bytes.Equal(out.Bytes(), b) {
		if err := os.WriteFile(doc, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"Example_check", "ExampleCheck", "ExampleEventSuite", "lineDecoder", "ExampleEngineOptions_routes", "ExampleEngineOptions_onEvent", "steady", "ExampleScenario"} {
		if !shown[n] {
			t.Errorf("%s shows no worked example %s", doc, n)
		}
	}
}
