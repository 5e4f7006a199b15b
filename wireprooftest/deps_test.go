package wireprooftest_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// heavy are the modules a user of wireprooftest must not download or
// build: SQLite (the fixture server's), the browser driver (the viewer's
// tests) and the object store client (storage).
var heavy = []string{"modernc.org/", "github.com/chromedp/", "github.com/minio/"}

// TestImportBuildsOnlyWhatItUses: a scratch module that requires this
// checkout (a replace directive) and imports only wireprooftest is listed,
// and its test run, with a module cache of its own fed by a proxy made of
// the local module cache without the heavy modules (GOFLAGS=-mod=mod, so
// the go command resolves the module graph itself, and nothing reachable
// but that proxy): if the go command needed one of them, to download or to
// build, it would fail. The packages it lists hold none of them.
func TestImportBuildsOnlyWhatItUses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command on a scratch module")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	checkout, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(context.Background(), goCmd, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	download := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")

	work := t.TempDir()
	proxy := filepath.Join(work, "proxy")
	linked := 0
	err = filepath.WalkDir(download, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != "@v" {
			return err
		}
		mod, _ := filepath.Rel(download, filepath.Dir(p))
		mod = filepath.ToSlash(mod)
		for _, h := range heavy {
			if strings.HasPrefix(mod, h) {
				return fs.SkipDir
			}
		}
		if err := os.MkdirAll(filepath.Join(proxy, mod), 0o755); err != nil {
			return err
		}
		linked++
		return os.Symlink(p, filepath.Join(proxy, mod, "@v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if linked == 0 {
		t.Fatalf("the module cache %s holds no modules: run go mod download first", download)
	}

	mod := filepath.Join(work, "scratch")
	os.MkdirAll(mod, 0o755)
	files := map[string]string{
		"go.mod": "module example.com/scratch\n\ngo 1.26.0\n\nrequire github.com/wireproof/wireproof v0.0.0\n\nreplace github.com/wireproof/wireproof => " + checkout + "\n",
		"scratch_test.go": `package scratch

import (
	"net/http"
	"testing"

	"github.com/wireproof/wireproof/wireprooftest"
)

func TestLinks(t *testing.T) {
	c := &http.Client{Transport: wireprooftest.RoundTripper("http://127.0.0.1:1", nil)}
	_ = c
	_ = wireprooftest.RecordOnce
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(),
		"GOFLAGS=-mod=mod -modcacherw",
		"GOPROXY=file://"+filepath.ToSlash(proxy),
		"GOMODCACHE="+filepath.Join(work, "modcache"),
		"GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local",
	)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(context.Background(), goCmd, args...)
		cmd.Dir, cmd.Env = mod, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in the scratch module: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	deps := run("list", "-deps", "-test", "./...")
	if !strings.Contains(deps, "github.com/wireproof/wireproof/wireprooftest\n") {
		t.Fatalf("go list -deps does not list wireprooftest:\n%s", deps)
	}
	for _, p := range strings.Fields(deps) {
		for _, h := range heavy {
			if strings.HasPrefix(p, h) {
				t.Errorf("importing wireprooftest builds %s", p)
			}
		}
	}
	run("test", "-count=1", "./...")
	gomod, _ := os.ReadFile(filepath.Join(mod, "go.mod"))
	for _, h := range heavy {
		if strings.Contains(string(gomod), h) {
			t.Errorf("the scratch module's go.mod requires %s:\n%s", h, gomod)
		}
	}
}
