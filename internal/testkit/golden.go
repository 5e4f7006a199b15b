package testkit

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the one -update flag of every package's tests.
var update = flag.Bool("update", false, "rewrite golden files under testdata/ instead of comparing with them")

// Update reports whether the tests run with -update: golden files are
// rewritten from what the code gives now, instead of compared with it.
func Update() bool { return *update }

// Golden compares got with the golden file at path (relative to the
// package's directory, usually under testdata/) and fails t with a diff if
// they differ. Under -update it writes got to path first (creating its
// directory), so the comparison passes and the change shows in git.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); run with -update if the change is meant:\n%s", path, diff)
	}
}
