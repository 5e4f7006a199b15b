package view

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/wireproof/wireproof/internal/objstore"
)

// Source is one bundle the viewer serves, with what a suite's results.json
// says about it when it came from one.
type Source struct {
	// Path is where the bundle is read from.
	Path string
	// Name is the bundle's path relative to the argument it was found under
	// (the file name for a bundle given directly), without ".zst".
	Name string
	// Iteration, Status and Check come from results.json (0 and "" without one).
	Iteration int
	Status    string
	Check     string
}

// InputError is an argument that names no bundle: a missing path, a file
// that is not a bundle, a directory without any.
type InputError struct {
	Arg string
	Err error
}

func (e *InputError) Error() string {
	var none *objstore.NoBundlesError
	if errors.As(e.Err, &none) {
		return e.Err.Error() // it names the directory already
	}
	if pe, ok := e.Err.(*fs.PathError); ok && pe.Op == "stat" {
		return fmt.Sprintf("%s: %v", e.Arg, pe.Err) // not the path twice
	}
	return fmt.Sprintf("%s: %v", e.Arg, e.Err)
}
func (e *InputError) Unwrap() error { return e.Err }

// suiteEntry is the part of a line of verify's results.json the viewer reads.
type suiteEntry struct {
	Iteration int    `json:"iteration"`
	Scenario  string `json:"scenario"`
	Status    string `json:"status"`
	Bundle    string `json:"bundle"`
	Check     string `json:"check"`
}

// ResolveOptions tune Resolve; nil means the defaults.
type ResolveOptions struct {
	// Warn, if set, is told of what does not stop the viewer: a results.json
	// that cannot be read (its bundles are shown without the suite's status).
	Warn func(error)
}

// Resolve turns the command line's arguments into bundles. Bundles are
// listed by objstore.Location.Bundles, the listing `wireproof replay` and
// `wireproof index` use, so the viewer shows exactly the bundles they read,
// in their order: a file is itself, a directory every *.zst under it except
// in kept workspaces (*.work). A results.json given as an argument stands for
// its directory. A suite's results.json beside listed bundles adds what the
// suite said of each run (iteration, status, failing check); it never adds
// or hides a bundle.
//
// A missing path is an *InputError wrapping the *fs.PathError, a directory
// without bundles one wrapping *objstore.NoBundlesError.
func Resolve(args []string, opts *ResolveOptions) ([]Source, error) {
	if len(args) == 0 {
		return nil, errors.New("no bundle or directory given")
	}
	if opts == nil {
		opts = &ResolveOptions{}
	}
	suites := map[string]map[string]suiteEntry{} // dir -> bundle base name -> entry
	var out []Source
	for _, arg := range args {
		root := arg
		if filepath.Base(arg) == "results.json" {
			root = filepath.Dir(arg)
		}
		loc, err := objstore.NewLocation(root, nil)
		var entries []objstore.Entry
		if err == nil {
			entries, err = loc.Bundles(context.Background())
		}
		if err != nil {
			return nil, &InputError{Arg: arg, Err: err}
		}
		for _, e := range entries {
			src := Source{Path: e.Name, Name: strings.TrimSuffix(e.Rel, objstore.BundleExt)}
			dir := filepath.Dir(e.Name)
			suite, ok := suites[dir]
			if !ok {
				suite = readResults(filepath.Join(dir, "results.json"), opts.Warn)
				suites[dir] = suite
			}
			if se, ok := suite[filepath.Base(e.Name)]; ok {
				src.Iteration, src.Status, src.Check = se.Iteration, se.Status, se.Check
			}
			out = append(out, src)
		}
	}
	return out, nil
}

// readResults reads a suite's results.json, if there is one, into its
// entries by bundle file name (the suite's bundles are written beside it;
// the path it names may be gone if the directory was moved since).
func readResults(path string, warn func(error)) map[string]suiteEntry {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var entries []suiteEntry
	if err == nil {
		if err = json.Unmarshal(b, &entries); err != nil {
			err = fmt.Errorf("%s: not a suite's results.json: %w", path, err)
		}
	}
	if err != nil {
		if warn != nil {
			warn(err)
		}
		return nil
	}
	out := make(map[string]suiteEntry, len(entries))
	for _, e := range entries {
		if e.Bundle != "" {
			out[filepath.Base(e.Bundle)] = e
		}
	}
	return out
}
